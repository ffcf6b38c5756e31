// Package pvbinder is kube-controller-manager's persistent volume binder
// (persistentvolume-binder-controller), as upstream's
// pkg/controller/volume/persistentvolume, without volume plugins:
//
//   - a Pending claim is bound to the smallest Available volume that fits
//     it (capacity, access modes, volume mode, storage class, volume
//     attributes class, label selector), trying the volumes of the fewest
//     access modes first; a volume pre-bound to it by spec.claimRef, or the
//     volume its spec.volumeName names, is bound as asked. Both sides are
//     written as upstream writes them: the volume's claimRef (with the
//     claim's UID), bound-by-controller annotation and phase Bound, the
//     claim's volumeName, bind-completed and bound-by-controller
//     annotations and status (phase, capacity, access modes, current
//     volume attributes class);
//   - a claim nothing fits gets the default StorageClass when it names
//     none and one exists; one of a class is handed to its provisioner
//     (the volume.kubernetes.io/storage-provisioner annotations and the
//     ExternalProvisioning event), or waits for a consumer when the class
//     binds WaitForFirstConsumer; one without a class gets FailedBinding;
//   - a bound claim whose volume is gone is Lost; a volume whose claim is
//     gone is Released and reclaimed by its policy: Retain keeps it;
//     Delete leaves a volume an external provisioner made (or a CSI one)
//     to its deleter, deletes a host path volume under /tmp (the
//     PersistentVolume only: upstream also removes the directory on its
//     own host) and fails the others with upstream's VolumeFailedDelete
//     event and phase Failed; Recycle fails with VolumeFailedRecycle, as
//     upstream's does for a volume without a recycler (it has one, a pod
//     scrubbing the volume, for host path and NFS volumes; admitd has
//     none).
//
// Every claim and volume is looked at again every resync period (upstream's
// --pvclaimbinder-sync-period, 15 s), which is how a Pending claim finds a
// volume created after it. It reads from the process's shared watch caches
// and writes as kube-controller-manager's persistent-volume-binder service
// account, through admission; a write from a stale cached object fails on
// its resourceVersion and is retried.
package pvbinder

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name.
const Name = "persistentvolume-binder-controller"

// User is kube-controller-manager's persistent-volume-binder service
// account (bound to system:controller:persistent-volume-binder); Component
// is its events' source.
var User = controllers.ControllerUser("persistent-volume-binder")

const Component = "persistentvolume-controller"

// DefaultResyncPeriod is kube-controller-manager's
// --pvclaimbinder-sync-period.
const DefaultResyncPeriod = 15 * time.Second

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface // writes as User
	Recorder  record.EventRecorder
	Log       *slog.Logger
	// Caches are the watch caches shared with the process's other
	// controllers, started by their maker; nil means its own, started by
	// Run.
	Caches *controllers.Caches
	// ResyncPeriod is how often every claim and volume is synced again;
	// zero is DefaultResyncPeriod.
	ResyncPeriod time.Duration
	// Metrics count the volumes, claims and default class assignments;
	// nil counts nothing.
	Metrics *Metrics
}

// Controller binds claims and volumes.
type Controller struct {
	client    kubernetes.Interface
	recorder  record.EventRecorder
	log       *slog.Logger
	resync    time.Duration
	caches    *controllers.Caches
	ownCaches bool
	volumes   *watchcache.Cache[*corev1.PersistentVolume]
	claims    *watchcache.Cache[*corev1.PersistentVolumeClaim]
	classes   *watchcache.Cache[*storagev1.StorageClass]
	pods      *watchcache.Cache[*corev1.Pod]
	metrics   *Metrics
	// claimQueue holds namespace/name keys of claims, volumeQueue names of
	// volumes.
	claimQueue  workqueue.TypedRateLimitingInterface[string]
	volumeQueue workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log, resync: cfg.ResyncPeriod, caches: cfg.Caches, metrics: cfg.Metrics,
		claimQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "claims"}),
		volumeQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "volumes"})}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.resync <= 0 {
		c.resync = DefaultResyncPeriod
	}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, c.log)
		c.ownCaches = true
	}
	if err := c.watch(); err != nil {
		return nil, err
	}
	if c.metrics != nil {
		c.metrics.source.Store(c)
	}
	return c, nil
}

// watch adds the controller's handlers to the caches it reads.
func (c *Controller) watch() error {
	var err error
	c.volumes, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("persistentvolumes"),
		watchcache.Handlers[*corev1.PersistentVolume]{
			Add:    c.queueVolume,
			Update: func(_, v *corev1.PersistentVolume) { c.queueVolume(v) },
			Remove: c.volumeDeleted})
	if err != nil {
		return err
	}
	c.claims, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"),
		watchcache.Handlers[*corev1.PersistentVolumeClaim]{
			Add:    c.queueClaim,
			Update: func(_, pvc *corev1.PersistentVolumeClaim) { c.queueClaim(pvc) },
			Remove: c.claimDeleted})
	if err != nil {
		return err
	}
	c.classes, err = controllers.Shared(c.caches, storagev1.SchemeGroupVersion.WithResource("storageclasses"), watchcache.Handlers[*storagev1.StorageClass]{})
	if err != nil {
		return err
	}
	c.pods, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("pods"), watchcache.Handlers[*corev1.Pod]{})
	if err != nil {
		return err
	}
	controllers.IndexPodsByClaim(c.pods)
	return nil
}

func (c *Controller) queueVolume(v *corev1.PersistentVolume) { c.volumeQueue.Add(v.Name) }

func (c *Controller) queueClaim(pvc *corev1.PersistentVolumeClaim) { c.claimQueue.Add(claimKey(pvc)) }

// volumeDeleted looks again at the claim of a volume that is gone (it may
// be Lost).
func (c *Controller) volumeDeleted(v *corev1.PersistentVolume) {
	if v.Spec.ClaimRef != nil {
		c.claimQueue.Add(claimRefKey(v.Spec.ClaimRef))
	}
}

// claimDeleted looks again at the volume of a claim that is gone (it may
// be Released).
func (c *Controller) claimDeleted(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Spec.VolumeName != "" {
		c.volumeQueue.Add(pvc.Spec.VolumeName)
	}
}

// Run syncs claims and volumes until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx)
	}
	synced := []<-chan struct{}{c.volumes.Synced(), c.claims.Synced(), c.classes.Synced(), c.pods.Synced()}
	controllers.RunWorkerPools(ctx, synced,
		controllers.WorkerPool{Queue: c.claimQueue, Workers: 1, ProcessNext: func(ctx context.Context) bool {
			return processNext(ctx, c.claimQueue, c.syncClaimByKey)
		}},
		controllers.WorkerPool{Queue: c.volumeQueue, Workers: 1, ProcessNext: func(ctx context.Context) bool {
			return processNext(ctx, c.volumeQueue, c.syncVolumeByName)
		}},
		controllers.WorkerPool{Workers: 1, ProcessNext: c.resyncEvery})
}

// processNext syncs one key of queue, retrying it rate-limited for as long
// as it fails (upstream drops no key).
func processNext(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], sync func(context.Context, string) error) bool {
	key, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(key)
	if err := sync(ctx, key); err != nil && ctx.Err() == nil {
		queue.AddRateLimited(key)
		return true
	}
	queue.Forget(key)
	return true
}

// resyncEvery queues every claim and volume each resync period until ctx
// ends.
func (c *Controller) resyncEvery(ctx context.Context) bool {
	t := time.NewTicker(c.resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		for _, pvc := range c.claims.ListAll(all[*corev1.PersistentVolumeClaim]) {
			c.queueClaim(pvc)
		}
		for _, v := range c.volumes.ListAll(all[*corev1.PersistentVolume]) {
			c.queueVolume(v)
		}
	}
}

func (c *Controller) syncClaimByKey(ctx context.Context, key string) error {
	ns, name := splitKey(key)
	pvc, ok := c.claims.Get(ns, name)
	if !ok {
		return nil
	}
	if err := c.syncClaim(ctx, pvc); err != nil {
		c.log.Debug("syncing a claim will retry", "claim", key, "err", err)
		return err
	}
	return nil
}

func (c *Controller) syncVolumeByName(ctx context.Context, name string) error {
	v, ok := c.volumes.Get("", name)
	if !ok {
		return nil
	}
	if err := c.syncVolume(ctx, v); err != nil {
		c.log.Debug("syncing a volume will retry", "volume", name, "err", err)
		return err
	}
	return nil
}

// all keeps every object of a cache's list.
func all[T any](T) bool { return true }
