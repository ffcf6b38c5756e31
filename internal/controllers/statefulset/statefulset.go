// Package statefulset is kube-controller-manager's StatefulSet controller
// (statefulset-controller), as upstream's pkg/controller/statefulset: it
// keeps each StatefulSet's pods "<set>-<ordinal>" (from spec.ordinals.start),
// with their identity (hostname, subdomain, the pod-name, pod-index and
// controller-revision-hash labels), their claims "<template>-<set>-<ordinal>"
// made from volumeClaimTemplates and owned as
// persistentVolumeClaimRetentionPolicy says; OrderedReady sets are created
// one pod at a time once the one before is Running and Ready and scaled
// down from the highest ordinal, Parallel ones all at once. Each spec's
// template is recorded in a ControllerRevision "<set>-<hash>" (hash and
// data as upstream's, history cut to revisionHistoryLimit); RollingUpdate
// replaces pods of older revisions from the highest ordinal down to the
// partition, maxUnavailable at a time, OnDelete only when they are deleted.
// It keeps the status (replicas, readyReplicas, currentReplicas,
// updatedReplicas, availableReplicas, revisions, collisionCount,
// observedGeneration) and records upstream's events.
//
// It reads from storage through watches (its informers) and writes only
// as a client of the server, as kube-controller-manager's
// statefulset-controller service account, through admission: a refused
// pod becomes a FailedCreate event with the refusal. It is not a kubelet:
// pods become ready when something else writes their status.
package statefulset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name, Component the source of
// its events, User who its requests run as.
const (
	Name      = controllers.StatefulSetControllerName
	Component = "statefulset-controller"
)

// User is kube-controller-manager's service account for the controller.
var User = controllers.ControllerUser("statefulset-controller")

var (
	controllerKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	podKind        = corev1.SchemeGroupVersion.WithKind("Pod")
)

// defaultWorkers is kube-controller-manager's --concurrent-statefulset-syncs.
const defaultWorkers = 5

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	// Client writes as User; Recorder records events as Component.
	Client   kubernetes.Interface
	Recorder record.EventRecorder
	Log      *slog.Logger
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
	// Workers sync that many sets at once; 0 means 5.
	Workers int
}

// Controller keeps StatefulSets' pods, claims, revisions and status.
type Controller struct {
	client    kubernetes.Interface
	recorder  record.EventRecorder
	log       *slog.Logger
	caches    *controllers.Caches
	ownCaches bool // caches are the controller's own, started by Run
	workers   int
	// defaultSet defaults a StatefulSet as the server does.
	defaultSet func(*appsv1.StatefulSet)

	sets        *watchcache.Cache[*appsv1.StatefulSet]
	pods        *watchcache.Cache[*corev1.Pod]
	claims      *watchcache.Cache[*corev1.PersistentVolumeClaim]
	revisions   *watchcache.Cache[*appsv1.ControllerRevision]
	consistency consistency
	queue       workqueue.TypedRateLimitingInterface[string]
	now         func() time.Time
}

// cacheOf returns the shared cache of one resource ("apps/statefulsets",
// "v1/pods"), with the handler set h added.
func cacheOf[T runtime.Object](caches *controllers.Caches, gvr string, h watchcache.Handlers[T]) (*watchcache.Cache[T], error) {
	gv, resource, _ := strings.Cut(gvr, "/")
	gvk := appsv1.SchemeGroupVersion
	if gv == "v1" {
		gvk = corev1.SchemeGroupVersion
	}
	return controllers.Shared(caches, gvk.WithResource(resource), h)
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log, workers: cfg.Workers, now: time.Now,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "statefulset"})}
	if c.workers <= 0 {
		c.workers = defaultWorkers
	}
	c.consistency = consistency{pending: map[string]*[resourceCount]written{}, now: time.Now}
	if c.caches = cfg.Caches; c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	setsRes, ok := cfg.Catalogue.Lookup(appsv1.SchemeGroupVersion.WithResource("statefulsets"))
	if !ok {
		return nil, fmt.Errorf("statefulsets are not served")
	}
	c.defaultSet = func(set *appsv1.StatefulSet) { setsRes.Default(set) }
	var err error
	if c.sets, err = cacheOf(c.caches, "apps/statefulsets", watchcache.Handlers[*appsv1.StatefulSet]{
		Add: c.enqueue, Update: func(_, cur *appsv1.StatefulSet) { c.enqueue(cur) }, Remove: c.enqueue}); err != nil {
		return nil, err
	}
	if c.pods, err = cacheOf(c.caches, "v1/pods", watchcache.Handlers[*corev1.Pod]{
		Add: c.addPodEvent, Update: c.updatePodEvent, Remove: c.deletePodEvent}); err != nil {
		return nil, err
	}
	controllers.IndexPodsByController(c.pods)
	if c.claims, err = cacheOf(c.caches, "v1/persistentvolumeclaims", watchcache.Handlers[*corev1.PersistentVolumeClaim]{}); err != nil {
		return nil, err
	}
	if c.revisions, err = cacheOf(c.caches, "apps/controllerrevisions", watchcache.Handlers[*appsv1.ControllerRevision]{}); err != nil {
		return nil, err
	}
	c.consistency.seen = [resourceCount]func() int64{c.sets.Revision, c.pods.Revision, c.claims.Revision, c.revisions.Revision}
	return c, nil
}

// Run follows storage and syncs sets until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	synced := []<-chan struct{}{c.sets.Synced(), c.pods.Synced(), c.claims.Synced(), c.revisions.Synced()}
	controllers.RunWorkers(ctx, c.queue, synced, c.workers, c.processNext)
}

func (c *Controller) processNext(ctx context.Context) bool {
	k, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(k)
	if err := c.sync(ctx, k); err != nil {
		if ctx.Err() == nil {
			c.log.Log(ctx, syncErrorLevel(err), "sync failed, will retry", "key", k, "err", err)
			c.queue.AddRateLimited(k)
		}
		return true
	}
	c.queue.Forget(k)
	return true
}

var errNotCaughtUp = errors.New("caches behind the controller's writes")

// syncErrorLevel: a refusal by the server is a warning; conflicts, lagging
// caches and objects gone are routine.
func syncErrorLevel(err error) slog.Level {
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) || errors.Is(err, errNotCaughtUp) {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

func key(namespace, name string) string { return namespace + "/" + name }

func (c *Controller) enqueue(set *appsv1.StatefulSet) { c.queue.Add(key(set.Namespace, set.Name)) }

// sync reconciles the set at key, once the caches have seen the
// controller's earlier writes for it.
func (c *Controller) sync(ctx context.Context, k string) error {
	if err := c.consistency.ensureCaughtUp(k); err != nil {
		return fmt.Errorf("%w: %v", errNotCaughtUp, err)
	}
	ns, name, _ := strings.Cut(k, "/")
	set, ok := c.sets.Get(ns, name)
	if !ok {
		c.consistency.forget(k)
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		c.log.Warn("invalid selector", "key", k, "err", err)
		return nil
	}
	if err := c.adoptOrphanRevisions(ctx, set); err != nil {
		return err
	}
	pods, err := c.claimPods(ctx, set, selector)
	if err != nil {
		return err
	}
	now := c.now()
	status, err := c.reconcile(ctx, set, pods, now)
	if err != nil {
		return err
	}
	if set.Spec.MinReadySeconds > 0 && status != nil && status.ReadyReplicas != status.AvailableReplicas {
		next := time.Duration(set.Spec.MinReadySeconds) * time.Second
		if d := nextAvailabilityCheck(pods, set.Spec.MinReadySeconds, now); d != nil {
			next = *d
		}
		c.queue.AddAfter(k, next)
	}
	return nil
}
