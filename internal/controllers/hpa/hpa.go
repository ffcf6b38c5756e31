// Package hpa is kube-controller-manager's horizontal pod autoscaler
// (horizontal-pod-autoscaler-controller), as upstream's
// pkg/controller/podautoscaler:
//
//   - each HorizontalPodAutoscaler is reconciled when it is added, when its
//     generation changes, and every sync period (upstream's
//     --horizontal-pod-autoscaler-sync-period, 15 s) after its last
//     reconciliation;
//   - its target is read through the scale subresource (any kind whose
//     resource serves one: Deployments, ReplicaSets, StatefulSets,
//     ReplicationControllers, custom resources), resolved through the
//     server's discovery as client-go's deferred REST mapper and scale
//     client resolve it; the pods are those the Scale status's selector
//     picks;
//   - a target above maxReplicas is scaled to it, one below minReplicas to
//     it, one at zero replicas is left alone (ScalingDisabled); otherwise
//     the desired count is the largest any metric proposes, from the
//     resource metrics API (metrics.k8s.io), the custom metrics API
//     (custom.metrics.k8s.io) and the external metrics API
//     (external.metrics.k8s.io), all asked through the server itself, so
//     an API nobody serves fails as it fails upstream;
//   - the proposal is stabilized and rate limited: without spec.behavior by
//     the downscale stabilization window (5 min) and a scale-up limit of
//     double the replicas (at least 4); with it by its stabilization
//     windows and policies, remembering each autoscaler's recent
//     recommendations and scale events in memory as upstream does;
//   - status (current and desired replicas, current metrics, last scale
//     time, observed generation) and the AbleToScale, ScalingActive,
//     ScalingLimited and ScaledToZero conditions are written with
//     upstream's reasons and messages, and so are its events.
//
// It reads autoscalers and pods from the process's shared watch caches
// and writes as kube-controller-manager's horizontal-pod-autoscaler
// service account, through admission.
package hpa

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name.
const Name = "horizontal-pod-autoscaler-controller"

// User is kube-controller-manager's horizontal-pod-autoscaler service
// account (bound to system:controller:horizontal-pod-autoscaler);
// Component is its events' source.
var User = controllers.ControllerUser("horizontal-pod-autoscaler")

const Component = "horizontal-pod-autoscaler"

// kube-controller-manager's defaults for the controller's flags.
const (
	DefaultSyncPeriod              = 15 * time.Second
	DefaultDownscaleStabilization  = 5 * time.Minute
	DefaultTolerance               = 0.1
	DefaultCPUInitializationPeriod = 5 * time.Minute
	DefaultInitialReadinessDelay   = 30 * time.Second
	defaultWorkers                 = 5
)

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	// Transport is the server's loopback acting as User: the controller's
	// clients (autoscalers, scale, discovery, metrics APIs) are built on it.
	Transport http.RoundTripper
	Recorder  record.EventRecorder
	Log       *slog.Logger
	// Caches are the watch caches shared with the process's other
	// controllers, started by their maker; nil means its own, started by
	// Run.
	Caches *controllers.Caches
	// SyncPeriod is how long after a reconciliation an autoscaler is
	// reconciled again; zero is DefaultSyncPeriod.
	SyncPeriod time.Duration
	// DownscaleStabilization, Tolerance, CPUInitializationPeriod and
	// InitialReadinessDelay are upstream's flags of those names; zero is
	// the default.
	DownscaleStabilization  time.Duration
	Tolerance               float64
	CPUInitializationPeriod time.Duration
	InitialReadinessDelay   time.Duration
	// Metrics are the horizontal_pod_autoscaler_controller families; nil
	// counts nothing.
	Metrics *Metrics
}

// Controller reconciles HorizontalPodAutoscalers.
type Controller struct {
	client      kubernetes.Interface
	target      *targets
	metrics     *metricsAPIs
	recorder    record.EventRecorder
	log         *slog.Logger
	syncPeriod  time.Duration
	downscale   time.Duration
	tolerance   float64
	calc        *calculator
	caches      *controllers.Caches
	ownCaches   bool
	autoscalers *watchcache.Cache[*autoscalingv2.HorizontalPodAutoscaler]
	pods        *watchcache.Cache[*corev1.Pod]
	monitor     *Metrics
	queue       workqueue.TypedRateLimitingInterface[string]
	selectors   *selectorStore
	mu          sync.Mutex
	history     map[string]*history
	consistency consistency
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{recorder: cfg.Recorder, log: cfg.Log, syncPeriod: cfg.SyncPeriod, downscale: cfg.DownscaleStabilization,
		tolerance: cfg.Tolerance, caches: cfg.Caches, monitor: cfg.Metrics, selectors: newSelectorStore(), history: map[string]*history{}}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.syncPeriod = orDefault(c.syncPeriod, DefaultSyncPeriod)
	c.downscale = orDefault(c.downscale, DefaultDownscaleStabilization)
	if c.tolerance == 0 {
		c.tolerance = DefaultTolerance
	}
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig[string](fixedInterval(c.syncPeriod),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "horizontalpodautoscaler"})
	var err error
	if c.client, err = controllers.NewClientset(cfg.Transport); err != nil {
		return nil, err
	}
	if c.target, err = newTargets(cfg.Transport, c.client.Discovery()); err != nil {
		return nil, err
	}
	if c.metrics, err = newMetricsAPIs(cfg.Transport, c.client.Discovery()); err != nil {
		return nil, err
	}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, c.log)
		c.ownCaches = true
	}
	if err := c.watch(); err != nil {
		return nil, err
	}
	c.consistency = consistency{seen: c.autoscalers.Revision, pending: map[string]int64{}}
	c.calc = &calculator{metrics: c.metrics, mapper: c.target, pods: c.podsMatching,
		cpuInitialization: orDefault(cfg.CPUInitializationPeriod, DefaultCPUInitializationPeriod),
		readinessDelay:    orDefault(cfg.InitialReadinessDelay, DefaultInitialReadinessDelay)}
	return c, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// watch adds the controller's handlers to the caches it reads.
func (c *Controller) watch() error {
	var err error
	c.autoscalers, err = controllers.Shared(c.caches, autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers"),
		watchcache.Handlers[*autoscalingv2.HorizontalPodAutoscaler]{
			Add:    c.enqueue,
			Update: c.updated,
			Remove: c.removed})
	if err != nil {
		return err
	}
	c.pods, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("pods"), watchcache.Handlers[*corev1.Pod]{})
	return err
}

func keyOf(h *autoscalingv2.HorizontalPodAutoscaler) string { return h.Namespace + "/" + h.Name }

// enqueue reconciles the autoscaler now, registering it (with a selector
// of no pods until its target's is known) the first time.
func (c *Controller) enqueue(h *autoscalingv2.HorizontalPodAutoscaler) {
	key := keyOf(h)
	if c.selectors.putIfAbsent(h.Namespace, key, labels.Nothing()) {
		c.monitor.autoscalerAdded()
	}
	c.queue.Add(key)
}

// updated reconciles the autoscaler now when its spec changed (its
// generation did), else at its next sync.
func (c *Controller) updated(old, cur *autoscalingv2.HorizontalPodAutoscaler) {
	if old.Generation != cur.Generation {
		c.enqueue(cur)
		return
	}
	c.queue.AddRateLimited(keyOf(cur))
}

func (c *Controller) removed(h *autoscalingv2.HorizontalPodAutoscaler) {
	key := keyOf(h)
	c.consistency.forget(key)
	c.queue.Forget(key)
	c.selectors.remove(h.Namespace, key)
	c.monitor.autoscalerDeleted()
}

// Run reconciles autoscalers until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx)
	}
	go c.target.resetEvery(ctx, mapperResetPeriod)
	go c.metrics.invalidateEvery(ctx, c.syncPeriod)
	controllers.RunWorkers(ctx, c.queue, []<-chan struct{}{c.autoscalers.Synced(), c.pods.Synced()}, defaultWorkers, c.processNext)
}

// processNext reconciles one autoscaler and queues it again for the next
// sync period unless it is gone.
func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	deleted, err := c.reconcileKey(ctx, key)
	if err != nil && ctx.Err() == nil {
		c.log.Debug("reconciling an autoscaler failed", "hpa", key, "err", err)
	}
	if !deleted {
		c.queue.AddRateLimited(key)
	}
	return true
}

// reconcileKey reconciles the autoscaler of key; deleted reports it gone
// (its recommendations and scale events forgotten).
func (c *Controller) reconcileKey(ctx context.Context, key string) (deleted bool, err error) {
	if err := c.consistency.ensureCaughtUp(key); err != nil {
		c.monitor.staleSkip()
		return false, err
	}
	ns, name, _ := strings.Cut(key, "/")
	h, ok := c.autoscalers.Get(ns, name)
	if !ok {
		c.consistency.forget(key)
		c.mu.Lock()
		delete(c.history, key)
		c.mu.Unlock()
		return true, nil
	}
	return false, c.reconcile(ctx, h, key)
}

// podsMatching lists the cached pods of namespace selector picks.
func (c *Controller) podsMatching(namespace string, selector labels.Selector) []*corev1.Pod {
	return c.pods.List(namespace, func(p *corev1.Pod) bool { return selector.Matches(labels.Set(p.Labels)) })
}

// fixedInterval is a rate limiter delaying every key by the sync period,
// as upstream's: an autoscaler is reconciled once per period.
type fixedInterval time.Duration

func (f fixedInterval) When(string) time.Duration { return time.Duration(f) }
func (f fixedInterval) NumRequeues(string) int    { return 1 }
func (f fixedInterval) Forget(string)             {}
