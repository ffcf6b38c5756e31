// Package nodelifecycle is kube-controller-manager's node lifecycle
// controller (node-lifecycle-controller), as upstream's
// pkg/controller/nodelifecycle:
//
//   - every monitor period it looks at each Node's health signals, the
//     Ready condition's heartbeat and the node's Lease in kube-node-lease;
//     a node silent for the grace period (the startup grace period while
//     it has never posted a Ready condition) gets Ready, MemoryPressure,
//     DiskPressure and PIDPressure Unknown, written to its status as the
//     node-controller;
//   - the NoSchedule taints follow the conditions (not-ready, unreachable,
//     memory-, disk-, pid-pressure, network-unavailable) and
//     spec.unschedulable, on every change of a Node;
//   - a node not Ready gets the not-ready or unreachable NoExecute taint
//     (which the taint eviction controller acts on) through a rate-limited
//     queue per zone: --node-eviction-rate nodes a second, the secondary
//     rate or none while a zone is partially disrupted, none at all while
//     every zone is fully disrupted; a Ready node loses them;
//   - when a node stops being Ready its pods' Ready condition becomes
//     False, and so does that of a pod bound to it later;
//   - it records the RegisteredNode, RemovingNode and NodeNotReady events
//     of upstream, and reconciles the beta OS and arch labels with the
//     stable ones.
//
// It reads Nodes, Pods and Leases from the process's shared watch caches
// and writes only as a client of the server, as its service account,
// through admission. Before it calls a node unreachable it reads the
// node's Lease from the server, as upstream's lease circuit breaker (beta,
// on by default in 1.37): a cached lease older than the stored one means
// the cache lags, and the node is looked at again in the next pass.
package nodelifecycle

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name.
const Name = "node-lifecycle-controller"

// User is kube-controller-manager's node-controller service account;
// Component is its events' source.
var User = controllers.ControllerUser("node-controller")

const Component = "node-controller"

// kube-controller-manager's defaults: --node-monitor-period,
// --node-monitor-grace-period, --node-startup-grace-period,
// --node-eviction-rate, --secondary-node-eviction-rate,
// --large-cluster-size-threshold and --unhealthy-zone-threshold.
const (
	DefaultMonitorPeriod          = 5 * time.Second
	DefaultMonitorGracePeriod     = 50 * time.Second
	DefaultStartupGracePeriod     = 60 * time.Second
	DefaultEvictionRate           = 0.1
	DefaultSecondaryEvictionRate  = 0.01
	DefaultLargeClusterThreshold  = 50
	DefaultUnhealthyZoneThreshold = 0.55
)

// taintPassPeriod is how often the zones' NoExecute queues are tried
// (upstream's NodeEvictionPeriod).
const taintPassPeriod = 100 * time.Millisecond

// Config is what the controller needs. A zero period, rate or threshold
// is kube-controller-manager's default; a negative rate is its rate 0 (one
// node tainted NoExecute per zone, the first token of the zone's bucket,
// then none).
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
	// Clock tells the time; the real clock if nil.
	Clock clock.WithTicker
	// Metrics count what it does; nil counts nothing.
	Metrics *Metrics

	MonitorPeriod, MonitorGracePeriod, StartupGracePeriod time.Duration
	EvictionRate, SecondaryEvictionRate                   float32
	LargeClusterThreshold                                 int
	UnhealthyZoneThreshold                                float32
}

func (cfg *Config) defaults() {
	setDefault(&cfg.MonitorPeriod, DefaultMonitorPeriod)
	setDefault(&cfg.MonitorGracePeriod, DefaultMonitorGracePeriod)
	setDefault(&cfg.StartupGracePeriod, DefaultStartupGracePeriod)
	setDefault(&cfg.EvictionRate, DefaultEvictionRate)
	setDefault(&cfg.SecondaryEvictionRate, DefaultSecondaryEvictionRate)
	setDefault(&cfg.LargeClusterThreshold, DefaultLargeClusterThreshold)
	setDefault(&cfg.UnhealthyZoneThreshold, DefaultUnhealthyZoneThreshold)
	// a negative rate is the flags' 0
	cfg.EvictionRate, cfg.SecondaryEvictionRate = max(cfg.EvictionRate, 0), max(cfg.SecondaryEvictionRate, 0)
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Controller is the node lifecycle controller.
type Controller struct {
	cfg       Config
	client    kubernetes.Interface
	recorder  record.EventRecorder
	log       *slog.Logger
	clock     clock.WithTicker
	metrics   *Metrics
	caches    *controllers.Caches
	ownCaches bool
	nodes     *watchcache.Cache[*corev1.Node]
	pods      *watchcache.Cache[*corev1.Pod]
	leases    *watchcache.Cache[*coordinationv1.Lease]
	// nodeQueue holds the nodes whose NoSchedule taints and labels are to
	// be brought in line; podQueue the pods newly bound to a node.
	nodeQueue workqueue.TypedInterface[string]
	podQueue  workqueue.TypedRateLimitingInterface[podKey]

	// mu guards what the monitor pass keeps between passes.
	mu     sync.Mutex
	health map[string]*nodeHealth
	known  map[string]*corev1.Node
	// zoneStates are the zones' states; tainters their queues of nodes
	// waiting for a NoExecute taint, which outlive the states.
	zoneStates map[string]zoneState
	tainters   map[string]*taintQueue
	// leaseRevisionNeeded, when not 0, is the storage revision the lease
	// cache must reach before any node is looked at again: a lease read
	// from the server was newer than the cached one (upstream's lease
	// circuit breaker, for the whole controller).
	leaseRevisionNeeded atomic.Int64
	// taintWake wakes the NoExecute taint passes, which sleep while no
	// node is waiting.
	taintWake chan struct{}
	retry     map[string]bool // nodes whose pods are still to be marked not ready
}

type podKey struct{ namespace, name string }

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	cfg.defaults()
	c := &Controller{cfg: cfg, client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log, clock: cfg.Clock, metrics: cfg.Metrics,
		nodeQueue: workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "node_lifecycle_controller"}),
		podQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[podKey](),
			workqueue.TypedRateLimitingQueueConfig[podKey]{Name: "node_lifecycle_controller_pods"}),
		health: map[string]*nodeHealth{}, known: map[string]*corev1.Node{}, zoneStates: map[string]zoneState{}, tainters: map[string]*taintQueue{}, retry: map[string]bool{},
		taintWake: make(chan struct{}, 1)}
	if c.caches = cfg.Caches; c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, c.log)
		c.ownCaches = true
	}
	queueNode := func(n *corev1.Node) { c.nodeQueue.Add(n.Name) }
	var err error
	c.nodes, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("nodes"), watchcache.Handlers[*corev1.Node]{
		Add: queueNode, Update: func(_, cur *corev1.Node) { queueNode(cur) }})
	if err != nil {
		return nil, err
	}
	c.pods, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("pods"), watchcache.Handlers[*corev1.Pod]{
		Add: func(p *corev1.Pod) { c.podBound(nil, p) }, Update: c.podBound})
	if err != nil {
		return nil, err
	}
	controllers.IndexPodsByNode(c.pods)
	c.leases, err = controllers.Shared(c.caches, coordinationv1.SchemeGroupVersion.WithResource("leases"), watchcache.Handlers[*coordinationv1.Lease]{})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// podBound queues a pod that has just been bound to a node.
func (c *Controller) podBound(old, cur *corev1.Pod) {
	if cur.Spec.NodeName != "" && (old == nil || old.Spec.NodeName != cur.Spec.NodeName) {
		c.podQueue.Add(podKey{cur.Namespace, cur.Name})
	}
}

// Run follows the caches and keeps the nodes' health, taints and pods
// until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	defer c.nodeQueue.ShutDown()
	defer c.podQueue.ShutDown()
	if c.ownCaches {
		c.caches.Start(ctx)
	}
	for _, synced := range []<-chan struct{}{c.nodes.Synced(), c.pods.Synced(), c.leases.Synced()} {
		select {
		case <-ctx.Done():
			return
		case <-synced:
		}
	}
	go c.nodeWorker(ctx)
	go c.podWorker(ctx)
	go c.taintPasses(ctx)
	c.every(ctx, c.cfg.MonitorPeriod, c.monitorNodeHealth)
}

// every calls pass, then again period after each pass ends, until ctx
// ends (upstream's wait.Until).
func (c *Controller) every(ctx context.Context, period time.Duration, pass func(context.Context)) {
	for {
		pass(ctx)
		t := c.clock.NewTimer(period)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// taintPasses runs the NoExecute taint pass every taintPassPeriod while
// some node waits in a zone's queue, and sleeps until one is queued
// otherwise (upstream polls all the time; the taints come as soon).
func (c *Controller) taintPasses(ctx context.Context) {
	for {
		c.noExecuteTaintPass(ctx)
		if !c.nodesWaiting() {
			select {
			case <-ctx.Done():
				return
			case <-c.taintWake:
				continue
			}
		}
		t := c.clock.NewTimer(taintPassPeriod)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// wakeTaintPasses wakes the taint passes for a node just queued.
func (c *Controller) wakeTaintPasses() {
	select {
	case c.taintWake <- struct{}{}:
	default:
	}
}

// nodesWaiting says whether a zone's queue holds a node.
func (c *Controller) nodesWaiting() bool {
	c.mu.Lock()
	queues := slices.Collect(maps.Values(c.tainters))
	c.mu.Unlock()
	return slices.ContainsFunc(queues, (*taintQueue).waitingAny)
}

func (c *Controller) nodeWorker(ctx context.Context) {
	for {
		name, shutdown := c.nodeQueue.Get()
		if shutdown {
			return
		}
		if err := c.syncNoScheduleTaints(ctx, name); err != nil {
			c.log.Warn("updating the node's NoSchedule taints", "node", name, "err", err)
		}
		if err := c.reconcileLabels(ctx, name); err != nil {
			c.log.Warn("reconciling the node's labels", "node", name, "err", err)
		}
		c.nodeQueue.Done(name)
	}
}

func (c *Controller) podWorker(ctx context.Context) {
	for {
		key, shutdown := c.podQueue.Get()
		if shutdown {
			return
		}
		if c.syncBoundPod(ctx, key) {
			c.podQueue.Forget(key)
		} else {
			c.podQueue.AddRateLimited(key)
		}
		c.podQueue.Done(key)
	}
}
