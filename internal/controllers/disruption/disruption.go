// Package disruption is kube-controller-manager's disruption controller
// (disruption-controller), as upstream's pkg/controller/disruption: it
// keeps each PodDisruptionBudget's status — the pods it selects that are
// healthy (Ready, not being deleted, not recently evicted), how many must
// be (minAvailable, or the expected pods less maxUnavailable, a percentage
// resolved against the scale of the pods' controllers: ReplicationController,
// Deployment, ReplicaSet, StatefulSet, or any owner's scale subresource),
// how many disruptions that allows, the pods evicted but not yet deleted
// (status.disruptedPods, forgotten after two minutes), observedGeneration
// and the DisruptionAllowed condition (SufficientPods, InsufficientPods, or
// SyncFailed with the error when the status cannot be computed) — and
// records upstream's events (NoPods, UnmanagedPods,
// CalculateExpectedPodCountFailed, MultiplePodDisruptionBudgets,
// NotDeleted). It also resets to False, after two minutes, a pod's
// DisruptionTarget condition that no deletion followed.
//
// The pods/eviction subresource (internal/apiserver) reads what it writes:
// an eviction takes one of status.disruptionsAllowed and records the pod
// in status.disruptedPods, which this controller keeps counting as
// unhealthy until the pod is gone or two minutes have passed.
//
// As the other workload controllers it reads from storage through a watch
// and writes only as a client of the server, as its own service account,
// through admission. It does not evict or delete pods.
package disruption

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name; Component is the source of
// its events, which kube-controller-manager's disruption controller names
// "controllermanager".
const (
	Name      = "disruption-controller"
	Component = "controllermanager"
	// workers is --concurrent-disruption-syncs' default.
	workers = 1
)

// User is kube-controller-manager's disruption-controller service account.
var User = controllers.ControllerUser("disruption-controller")

// Timeouts, as upstream's.
const (
	// DeletionTimeout is how long a pod evicted (in status.disruptedPods)
	// counts as unhealthy while it is not yet being deleted.
	DeletionTimeout = 2 * time.Minute
	// StalePodDisruptionTimeout is how long a pod that is not being deleted
	// keeps a True DisruptionTarget condition before it is reset.
	StalePodDisruptionTimeout = 2 * time.Minute
)

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface // writes as User
	Recorder  record.EventRecorder
	Log       *slog.Logger
	// Clock tells the time and wakes budgets and pods when their
	// timeouts pass; the real clock if nil (tests step a fake one).
	Clock clock.WithTicker
	// StalePodDisruptionTimeout replaces StalePodDisruptionTimeout when
	// not zero (tests).
	StalePodDisruptionTimeout time.Duration
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
}

// Controller keeps PodDisruptionBudgets' status.
type Controller struct {
	client       kubernetes.Interface
	recorder     record.EventRecorder
	log          *slog.Logger
	cat          *registry.Catalogue
	caches       *controllers.Caches
	ownCaches    bool // caches are the controller's own, started by Run
	clock        clock.WithTicker
	staleTimeout time.Duration

	synced []<-chan struct{}

	pdbs         *watchcache.Cache[*policyv1.PodDisruptionBudget]
	pods         *watchcache.Cache[*corev1.Pod]
	rcs          *watchcache.Cache[*corev1.ReplicationController]
	replicaSets  *watchcache.Cache[*appsv1.ReplicaSet]
	deployments  *watchcache.Cache[*appsv1.Deployment]
	statefulSets *watchcache.Cache[*appsv1.StatefulSet]

	// queue holds the budgets to sync, recheck those to sync when a
	// disrupted pod's timeout passes, stalePods the pods whose
	// DisruptionTarget condition may be stale.
	queue     workqueue.TypedRateLimitingInterface[string]
	recheck   workqueue.TypedDelayingInterface[string]
	stalePods workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	c := &Controller{client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log, cat: cfg.Catalogue, caches: cfg.Caches,
		clock: clk, staleTimeout: StalePodDisruptionTimeout,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "disruption", Clock: clk}),
		recheck: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{
			Name: "disruption_recheck", Clock: clk}),
		stalePods: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "stale_pod_disruption", Clock: clk}),
	}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	if cfg.StalePodDisruptionTimeout != 0 {
		c.staleTimeout = cfg.StalePodDisruptionTimeout
	}
	var err error
	c.pdbs, err = follow(c, policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"),
		watchcache.Handlers[*policyv1.PodDisruptionBudget]{Add: c.enqueue, Update: func(_, cur *policyv1.PodDisruptionBudget) { c.enqueue(cur) }, Remove: c.enqueue})
	if err != nil {
		return nil, err
	}
	c.pods, err = follow(c, corev1.SchemeGroupVersion.WithResource("pods"),
		watchcache.Handlers[*corev1.Pod]{Add: c.podChanged, Update: func(_, cur *corev1.Pod) { c.podChanged(cur) }, Remove: c.podGone})
	if err != nil {
		return nil, err
	}
	if c.rcs, err = follow(c, corev1.SchemeGroupVersion.WithResource("replicationcontrollers"), watchcache.Handlers[*corev1.ReplicationController]{}); err != nil {
		return nil, err
	}
	if c.replicaSets, err = follow(c, appsv1.SchemeGroupVersion.WithResource("replicasets"), watchcache.Handlers[*appsv1.ReplicaSet]{}); err != nil {
		return nil, err
	}
	if c.deployments, err = follow(c, appsv1.SchemeGroupVersion.WithResource("deployments"), watchcache.Handlers[*appsv1.Deployment]{}); err != nil {
		return nil, err
	}
	if c.statefulSets, err = follow(c, appsv1.SchemeGroupVersion.WithResource("statefulsets"), watchcache.Handlers[*appsv1.StatefulSet]{}); err != nil {
		return nil, err
	}
	return c, nil
}

// follow returns the shared cache of the objects of gvr, decoded as T,
// with h's handlers added, and waits for it to sync when the controller
// runs.
func follow[T any](c *Controller, gvr schema.GroupVersionResource, h watchcache.Handlers[T]) (*watchcache.Cache[T], error) {
	cache, err := controllers.Shared(c.caches, gvr, h)
	if err != nil {
		return nil, err
	}
	c.synced = append(c.synced, cache.Synced())
	return cache, nil
}

// Run follows storage and keeps budgets' status until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		controllers.RunWorkers(ctx, c.recheck, c.synced, 1, func(context.Context) bool { return c.processNextRecheck() })
	})
	wg.Go(func() {
		controllers.RunWorkers(ctx, c.stalePods, c.synced, 1, c.processNextStalePod)
	})
	controllers.RunWorkers(ctx, c.queue, c.synced, workers, c.processNext)
	wg.Wait()
}

func key(namespace, name string) string { return namespace + "/" + name }

func (c *Controller) enqueue(pdb *policyv1.PodDisruptionBudget) {
	c.queue.Add(key(pdb.Namespace, pdb.Name))
}

// podChanged syncs the budget of a new or changed pod, and schedules the
// reset of its DisruptionTarget condition if that may become stale.
func (c *Controller) podChanged(pod *corev1.Pod) {
	if pdb := c.budgetOf(pod); pdb != nil {
		c.enqueue(pdb)
	}
	if stale, after := c.staleDisruptionCondition(pod); stale {
		c.stalePods.AddAfter(key(pod.Namespace, pod.Name), after)
	}
}

func (c *Controller) podGone(pod *corev1.Pod) {
	if pdb := c.budgetOf(pod); pdb != nil {
		c.enqueue(pdb)
	}
}

// budgetOf is one budget that selects pod, nil for none; a pod that more
// than one selects gets a MultiplePodDisruptionBudgets warning naming the
// one chosen.
func (c *Controller) budgetOf(pod *corev1.Pod) *policyv1.PodDisruptionBudget {
	pdbs := c.budgetsOf(pod)
	if len(pdbs) == 0 {
		return nil
	}
	if len(pdbs) > 1 {
		msg := fmt.Sprintf("Pod %q/%q matches multiple PodDisruptionBudgets.  Chose %q arbitrarily.", pod.Namespace, pod.Name, pdbs[0].Name)
		c.log.Info(msg)
		c.recorder.Event(pod, corev1.EventTypeWarning, "MultiplePodDisruptionBudgets", msg)
	}
	return pdbs[0]
}

func (c *Controller) processNext(ctx context.Context) bool {
	k, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(k)
	if err := c.sync(ctx, k); err != nil {
		if ctx.Err() == nil {
			c.log.Debug("syncing a PodDisruptionBudget will retry", "key", k, "err", err)
			c.queue.AddRateLimited(k)
		}
		return true
	}
	c.queue.Forget(k)
	return true
}

// processNextRecheck moves a budget whose disrupted pod's timeout has
// passed to the sync queue.
func (c *Controller) processNextRecheck() bool {
	k, quit := c.recheck.Get()
	if quit {
		return false
	}
	defer c.recheck.Done(k)
	c.queue.AddRateLimited(k)
	return true
}

func (c *Controller) processNextStalePod(ctx context.Context) bool {
	k, quit := c.stalePods.Get()
	if quit {
		return false
	}
	defer c.stalePods.Done(k)
	if err := c.resetStaleDisruption(ctx, k); err != nil {
		if ctx.Err() == nil {
			c.log.Debug("clearing a pod's DisruptionTarget condition will retry", "pod", k, "err", err)
			c.stalePods.AddRateLimited(k)
		}
		return true
	}
	c.stalePods.Forget(k)
	return true
}
