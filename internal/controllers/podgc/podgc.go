// Package podgc is kube-controller-manager's pod garbage collector
// (pod-garbage-collector-controller), as upstream's pkg/controller/podgc:
// every check period it force-deletes (grace period 0) the terminated pods
// (phase Succeeded or Failed) beyond --terminated-pod-gc-threshold, evicted
// ones first and then the oldest; terminating pods on a node that is not
// Ready and carries the node.kubernetes.io/out-of-service taint; pods bound
// to a node that no longer exists, once the node has been missing for the
// quarantine time and a read from the server confirms it is gone; and
// terminating pods never scheduled. A pod not yet Succeeded or Failed is
// first patched to phase Failed (an orphan with the DisruptionTarget
// condition, reason DeletionByPodGC), as upstream, so that its controllers
// see it failed even though no kubelet will report it.
//
// It reads pods and nodes from storage through a watch and writes only as
// a client of the server, as its own service account, through admission.
// It records no events, as upstream.
package podgc

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name.
const Name = "pod-garbage-collector-controller"

// User is kube-controller-manager's pod-garbage-collector service account.
var User = controllers.ControllerUser("pod-garbage-collector")

// Upstream's defaults: --terminated-pod-gc-threshold, and the check period
// and quarantine time kube-controller-manager has no flags for.
const (
	DefaultTerminatedPodThreshold = 12500
	DefaultCheckPeriod            = 20 * time.Second
	DefaultQuarantineTime         = 40 * time.Second
)

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface // patches and deletes as User
	Log       *slog.Logger
	// TerminatedPodThreshold is how many terminated pods may exist before
	// the oldest are deleted; 0 or less turns that collection off.
	TerminatedPodThreshold int
	// CheckPeriod is the time between passes (DefaultCheckPeriod).
	CheckPeriod time.Duration
	// QuarantineTime is how long a node must be missing before its pods
	// are deleted as orphans (DefaultQuarantineTime); 0 deletes them at
	// the first pass that finds the node gone.
	QuarantineTime time.Duration
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
}

// Controller is the pod garbage collector.
type Controller struct {
	client     kubernetes.Interface
	log        *slog.Logger
	threshold  int
	period     time.Duration
	quarantine time.Duration
	caches     *controllers.Caches
	ownCaches  bool // caches are the controller's own, started by Run
	pods       *watchcache.Cache[*corev1.Pod]
	nodes      *watchcache.Cache[*corev1.Node]
	// missingNodes holds the names of nodes pods are bound to but that
	// were not found, each until its quarantine ends.
	missingNodes workqueue.TypedDelayingInterface[string]
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{client: cfg.Client, log: cfg.Log, threshold: cfg.TerminatedPodThreshold,
		period: cfg.CheckPeriod, quarantine: cfg.QuarantineTime,
		missingNodes: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "orphaned_pods_nodes"})}
	if c.period <= 0 {
		c.period = DefaultCheckPeriod
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.caches = cfg.Caches; c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, c.log)
		c.ownCaches = true
	}
	var err error
	if c.pods, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("pods"), watchcache.Handlers[*corev1.Pod]{}); err != nil {
		return nil, err
	}
	if c.nodes, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("nodes"), watchcache.Handlers[*corev1.Node]{}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run follows storage and collects pods every check period until ctx
// ends.
func (c *Controller) Run(ctx context.Context) {
	defer c.missingNodes.ShutDown()
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	for _, synced := range []<-chan struct{}{c.pods.Synced(), c.nodes.Synced()} {
		select {
		case <-ctx.Done():
			return
		case <-synced:
		}
	}
	for {
		c.Collect(ctx, c.pods.ListAll(func(*corev1.Pod) bool { return true }), c.nodes.ListAll(func(*corev1.Node) bool { return true }))
		select {
		case <-ctx.Done():
			return
		case <-time.After(c.period): // after the pass, as upstream's wait.Until
		}
	}
}
