// Package tainteviction is kube-controller-manager's taint eviction
// controller (taint-eviction-controller), as upstream's
// pkg/controller/tainteviction: it deletes the pods bound to nodes tainted
// with effect NoExecute.
//
// For each pod bound to a node (spec.nodeName) whose node has NoExecute
// taints, every taint is matched with the first of the pod's tolerations
// that tolerates it. A pod with a taint none tolerates is deleted at once;
// one whose matched tolerations set tolerationSeconds is deleted once the
// smallest of them has passed (0 or less: at once); one whose matched
// tolerations set none tolerates the taints for ever. A scheduled deletion
// is cancelled, with a "Cancelling deletion" event, when the node's
// NoExecute taints go, when the pod comes to tolerate them for ever, or
// when the pod is gone; a new taint that shortens the wait does not move a
// deletion already scheduled earlier. A deleted node forgets its taints but
// cancels nothing.
//
// Pods and nodes are followed only for what matters here: a node's
// NoExecute taints, a pod's tolerations and node, its arrival and removal.
// Node changes are handled before pod changes, on one worker, so that a pod
// is judged against its node's latest taints.
//
// A deletion, when it fires, records a "Marking for deletion" event, reads
// the pod from the server, sets its DisruptionTarget condition (reason
// DeletionByTaintManager) with a status patch unless the pod already has
// that condition as it would be set, and deletes the pod with default
// options (its own grace period), trying up to five times. Pods being
// deleted already, or terminated, are not skipped, as upstream. Successful
// deletions are counted in upstream's two metrics.
//
// It reads pods and nodes from storage through the shared watch caches and
// writes only as a client of the server, as kube-controller-manager's
// node-controller service account (whose role upstream's controller uses),
// through admission.
package tainteviction

import (
	"context"
	"log/slog"

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

// Name is the controller's --controllers name; Component is the source of
// its events, which upstream names after the controller.
const (
	Name      = "taint-eviction-controller"
	Component = "taint-eviction-controller"
)

// User is the service account upstream's controller writes as:
// kube-controller-manager gives it node-controller's credentials and role.
var User = controllers.ControllerUser("node-controller")

// deletionWorkers is how many deletions run at once (upstream starts each
// in its own goroutine).
const deletionWorkers = 8

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface // patches and deletes pods as User
	Recorder  record.EventRecorder
	Log       *slog.Logger
	// Clock tells the time and fires the scheduled deletions; the real
	// clock if nil (tests step a fake one).
	Clock clock.WithTickerAndDelayedExecution
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
	// Metrics count the deletions (nil: not counted).
	Metrics *Metrics
	// ComparisonOperators is the TaintTolerationComparisonOperators
	// feature gate (alpha, off by default): tolerations with operator Lt
	// or Gt match nothing without it.
	ComparisonOperators bool
}

// Controller deletes pods from nodes with NoExecute taints.
type Controller struct {
	client    kubernetes.Interface
	recorder  record.EventRecorder
	log       *slog.Logger
	clock     clock.WithTickerAndDelayedExecution
	metrics   *Metrics
	compareOp bool
	caches    *controllers.Caches
	ownCaches bool // caches are the controller's own, started by Run

	pods  *watchcache.Cache[*corev1.Pod]
	nodes *watchcache.Cache[*corev1.Node]

	// nodeUpdates and podUpdates hold the changes to handle; the one
	// update worker takes node changes first.
	nodeUpdates workqueue.TypedInterface[string]
	podUpdates  workqueue.TypedInterface[podUpdate]
	// taintedNodes are the NoExecute taints of every node that has some,
	// by node name; only the update worker reads and writes it.
	taintedNodes map[string][]corev1.Taint
	// deletions are the scheduled pod deletions.
	deletions *schedule
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log, clock: cfg.Clock, metrics: cfg.Metrics,
		compareOp: cfg.ComparisonOperators, caches: cfg.Caches, taintedNodes: map[string][]corev1.Taint{}}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, c.log)
		c.ownCaches = true
	}
	c.nodeUpdates = workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "noexec_taint_node", Clock: c.clock})
	c.podUpdates = workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[podUpdate]{Name: "noexec_taint_pod", Clock: c.clock})
	c.deletions = newSchedule(c.clock)
	var err error
	c.pods, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("pods"), watchcache.Handlers[*corev1.Pod]{
		Add: func(p *corev1.Pod) { c.podChanged(nil, p) }, Update: c.podChanged, Remove: func(p *corev1.Pod) { c.podChanged(p, nil) }})
	if err != nil {
		return nil, err
	}
	controllers.IndexPodsByNode(c.pods)
	c.nodes, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("nodes"), watchcache.Handlers[*corev1.Node]{
		Add: func(n *corev1.Node) { c.nodeChanged(nil, n) }, Update: c.nodeChanged, Remove: func(n *corev1.Node) { c.nodeChanged(n, nil) }})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Run follows storage, handles changes and runs the deletions as they
// fall due until ctx ends; deletions not yet run are dropped.
func (c *Controller) Run(ctx context.Context) {
	defer c.deletions.stop()
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	nodeCh, podCh := make(chan string), make(chan podUpdate)
	controllers.RunWorkerPools(ctx, []<-chan struct{}{c.pods.Synced(), c.nodes.Synced()},
		controllers.WorkerPool{Queue: c.nodeUpdates, Workers: 1, ProcessNext: func(ctx context.Context) bool { return pass(ctx, c.nodeUpdates, nodeCh) }},
		controllers.WorkerPool{Queue: c.podUpdates, Workers: 1, ProcessNext: func(ctx context.Context) bool { return pass(ctx, c.podUpdates, podCh) }},
		controllers.WorkerPool{Workers: 1, ProcessNext: func(ctx context.Context) bool { return c.handleUpdates(ctx, nodeCh, podCh) }},
		controllers.WorkerPool{Queue: c.deletions.queue, Workers: deletionWorkers, ProcessNext: c.processNextDeletion},
	)
}
