// Package vacprotection is kube-controller-manager's VolumeAttributesClass
// protection controller (volumeattributesclass-protection-controller), as
// upstream's pkg/controller/volume/vacprotection:
//
//   - a VolumeAttributesClass not being deleted gets the
//     kubernetes.io/vac-protection finalizer when it lacks it (the
//     StorageObjectInUseProtection admission plugin adds it at creation;
//     the controller covers classes made without that plugin);
//   - a VolumeAttributesClass being deleted keeps the finalizer while a
//     PersistentVolume names it in spec.volumeAttributesClassName, or a
//     PersistentVolumeClaim in spec.volumeAttributesClassName,
//     status.currentVolumeAttributesClassName or
//     status.modifyVolumeStatus.targetVolumeAttributesClassName, and loses
//     it once none does;
//   - a class is synced again when it is created or changes, when a claim
//     or volume that named it stops naming it, or is deleted. Failed syncs
//     are retried, rate-limited, without end; one worker, as upstream.
//
// Both writes are updates of the whole class, as upstream's. It reads
// classes, claims and volumes from the process's shared watch caches and
// writes as kube-controller-manager's
// volumeattributesclass-protection-controller service account, through
// admission. It records no events.
package vacprotection

import (
	"context"
	"log/slog"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name.
const Name = "volumeattributesclass-protection-controller"

// User is kube-controller-manager's
// volumeattributesclass-protection-controller service account (bound to
// system:controller:volumeattributesclass-protection-controller).
var User = controllers.ControllerUser("volumeattributesclass-protection-controller")

// Finalizer holds a VolumeAttributesClass while claims or volumes name it.
const Finalizer = "kubernetes.io/vac-protection"

// byClassIndex is the name of the claims' and volumes' index by the
// classes they name.
const byClassIndex = "vacprotection.volumeAttributesClassName"

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface // writes as User
	Log       *slog.Logger
	// Caches are the watch caches shared with the process's other
	// controllers, started by their maker; nil means its own, started by
	// Run.
	Caches *controllers.Caches
}

// Controller keeps the protection finalizer of VolumeAttributesClasses.
type Controller struct {
	client    kubernetes.Interface
	log       *slog.Logger
	caches    *controllers.Caches
	ownCaches bool
	classes   *watchcache.Cache[*storagev1.VolumeAttributesClass]
	claims    *watchcache.Cache[*corev1.PersistentVolumeClaim]
	volumes   *watchcache.Cache[*corev1.PersistentVolume]
	queue     workqueue.TypedRateLimitingInterface[string] // class name
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{client: cfg.Client, log: cfg.Log, caches: cfg.Caches,
		// named as upstream's queue, for its workqueue_* series
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "vacprotection"})}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, c.log)
		c.ownCaches = true
	}
	var err error
	if c.classes, err = controllers.Shared(c.caches, storagev1.SchemeGroupVersion.WithResource("volumeattributesclasses"),
		watchcache.Handlers[*storagev1.VolumeAttributesClass]{Add: c.classChanged,
			Update: func(_, cur *storagev1.VolumeAttributesClass) { c.classChanged(cur) }}); err != nil {
		return nil, err
	}
	if c.claims, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"),
		watchcache.Handlers[*corev1.PersistentVolumeClaim]{
			Update: func(old, cur *corev1.PersistentVolumeClaim) { c.queueDropped(ClaimClasses(old), ClaimClasses(cur)) },
			Remove: func(pvc *corev1.PersistentVolumeClaim) { c.queueAll(ClaimClasses(pvc)) }}); err != nil {
		return nil, err
	}
	if c.volumes, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("persistentvolumes"),
		watchcache.Handlers[*corev1.PersistentVolume]{
			Update: func(old, cur *corev1.PersistentVolume) { c.queueDropped(VolumeClasses(old), VolumeClasses(cur)) },
			Remove: func(pv *corev1.PersistentVolume) { c.queueAll(VolumeClasses(pv)) }}); err != nil {
		return nil, err
	}
	c.claims.AddIndex(byClassIndex, ClaimClasses)
	c.volumes.AddIndex(byClassIndex, VolumeClasses)
	return c, nil
}

// Run keeps the finalizers until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx)
	}
	synced := []<-chan struct{}{c.classes.Synced(), c.claims.Synced(), c.volumes.Synced()}
	controllers.RunWorkers(ctx, c.queue, synced, 1, c.processNext)
}

func (c *Controller) processNext(ctx context.Context) bool {
	// upstream retries a failed class without a limit
	return controllers.ProcessNextWithRetries(ctx, c.queue, c.sync, controllers.Retries{Max: math.MaxInt, Log: c.log,
		Retry: "syncing a volume attributes class failed, will retry"})
}

// classChanged queues a class that lacks the finalizer or is being
// deleted with it: the others have nothing to do.
func (c *Controller) classChanged(vac *storagev1.VolumeAttributesClass) {
	if needsFinalizer(vac) || deletionCandidate(vac) {
		c.queue.Add(vac.Name)
	}
}

// queueDropped queues the classes in before that are not in after: only a
// reference that goes can unblock a deletion.
func (c *Controller) queueDropped(before, after []string) {
	for _, name := range before {
		if !slices.Contains(after, name) {
			c.queue.Add(name)
		}
	}
}

func (c *Controller) queueAll(names []string) {
	for _, name := range names {
		c.queue.Add(name)
	}
}

// sync removes the finalizer of a class being deleted that nothing names,
// or adds it to a class not being deleted that lacks it.
func (c *Controller) sync(ctx context.Context, name string) error {
	vac, ok := c.classes.Get("", name)
	if !ok {
		return nil
	}
	switch {
	case deletionCandidate(vac) && !c.inUse(name):
		vac = vac.DeepCopy()
		vac.Finalizers = slices.DeleteFunc(vac.Finalizers, func(f string) bool { return f == Finalizer })
		return c.update(ctx, vac, "removed the protection finalizer of a volume attributes class")
	case needsFinalizer(vac):
		vac = vac.DeepCopy()
		vac.Finalizers = append(vac.Finalizers, Finalizer)
		return c.update(ctx, vac, "added the protection finalizer to a volume attributes class")
	}
	return nil
}

func (c *Controller) update(ctx context.Context, vac *storagev1.VolumeAttributesClass, done string) error {
	if _, err := c.client.StorageV1().VolumeAttributesClasses().Update(ctx, vac, metav1.UpdateOptions{}); err != nil {
		return err
	}
	c.log.Debug(done, "class", vac.Name)
	return nil
}

// inUse reports whether a volume or a claim names the class, as the
// caches have them.
func (c *Controller) inUse(name string) bool {
	if pvs := c.volumes.ByIndex(byClassIndex, name); len(pvs) > 0 {
		c.log.Debug("keeping a deleted volume attributes class a volume names", "class", name, "volume", pvs[0].Name)
		return true
	}
	if pvcs := c.claims.ByIndex(byClassIndex, name); len(pvcs) > 0 {
		c.log.Debug("keeping a deleted volume attributes class a claim names", "class", name, "claim", pvcs[0].Namespace+"/"+pvcs[0].Name)
		return true
	}
	return false
}

// needsFinalizer: the class is not being deleted and lacks the finalizer
// (upstream's protectionutil.NeedToAddFinalizer).
func needsFinalizer(vac *storagev1.VolumeAttributesClass) bool {
	return vac.DeletionTimestamp == nil && !slices.Contains(vac.Finalizers, Finalizer)
}

// deletionCandidate: the class is being deleted and still holds the
// finalizer (upstream's protectionutil.IsDeletionCandidate).
func deletionCandidate(vac *storagev1.VolumeAttributesClass) bool {
	return vac.DeletionTimestamp != nil && slices.Contains(vac.Finalizers, Finalizer)
}

// ClaimClasses are the classes a claim names, each once: the one it asks
// for, the one its volume has, and the one a modification in progress
// moves it to.
func ClaimClasses(pvc *corev1.PersistentVolumeClaim) []string {
	var names []string
	add := func(name string) {
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if pvc.Spec.VolumeAttributesClassName != nil {
		add(*pvc.Spec.VolumeAttributesClassName)
	}
	if pvc.Status.CurrentVolumeAttributesClassName != nil {
		add(*pvc.Status.CurrentVolumeAttributesClassName)
	}
	if m := pvc.Status.ModifyVolumeStatus; m != nil {
		add(m.TargetVolumeAttributesClassName)
	}
	return names
}

// VolumeClasses is the class a volume names, if any.
func VolumeClasses(pv *corev1.PersistentVolume) []string {
	if name := pv.Spec.VolumeAttributesClassName; name != nil && *name != "" {
		return []string{*name}
	}
	return nil
}
