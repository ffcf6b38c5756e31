// Package endpointslice is kube-controller-manager's EndpointSlice
// controller (endpointslice-controller), as upstream's
// pkg/controller/endpointslice: for every Service with a selector (not
// ExternalName) it keeps EndpointSlices of the pods the selector matches,
// one set per IP family of the Service, at most 100 endpoints a slice,
// named by the server from generateName "<service>-", labelled
// kubernetes.io/service-name and endpointslice.kubernetes.io/managed-by,
// owned by the Service, with the endpoints.kubernetes.io/last-change-trigger-time
// annotation. Which slices to create, update and delete is decided by
// k8s.io/endpointslice's reconciler, the library upstream's controller
// calls; this package is the controller around it: caches fed by
// storage, queues, and the sync of one Service.
//
// It reads Services, Pods, Nodes and EndpointSlices from storage through
// watches and writes only as a client of the server, as
// kube-controller-manager's endpointslice-controller service account,
// through admission; events come from "endpoint-slice-controller". It
// does not mirror Endpoints written by others into slices (that is
// endpointslice-mirroring-controller).
package endpointslice

import (
	"context"
	"log/slog"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	endpointslicerec "k8s.io/endpointslice"
	"k8s.io/endpointslice/topologycache"
	endpointsliceutil "k8s.io/endpointslice/util"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name; Component the source of
// its events; ManagedBy the value of the slices'
// endpointslice.kubernetes.io/managed-by label.
const (
	Name      = controllers.EndpointSliceControllerName
	Component = "endpoint-slice-controller"
	ManagedBy = "endpointslice-controller.k8s.io"

	// maxEndpointsPerSlice is kube-controller-manager's
	// --max-endpoints-per-slice default.
	maxEndpointsPerSlice = 100
	// defaultWorkers is --concurrent-service-endpoint-syncs's default.
	defaultWorkers = 5
	// maxRetries is how often a failing Service is retried before it
	// waits for its next change.
	maxRetries = 15
	// sliceChangeDelay is how long a change of a slice waits before its
	// Service is synced (upstream's endpointSliceChangeMinSyncDelay).
	sliceChangeDelay = time.Second
)

// User is kube-controller-manager's endpointslice-controller service
// account.
var User = controllers.ControllerUser("endpointslice-controller")

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
	// Workers sync that many Services at once; 0 means 5.
	Workers int
	// BatchPeriod delays the sync that follows a pod change (kube-controller-manager's
	// --endpointslice-updates-batch-period, 0 by default).
	BatchPeriod time.Duration
}

// Controller keeps the EndpointSlices of Services.
type Controller struct {
	caches      *controllers.Caches
	ownCaches   bool // caches are the controller's own, started by Run
	client      kubernetes.Interface
	recorder    record.EventRecorder
	log         *slog.Logger
	logger      logr.Logger
	workers     int
	batchPeriod time.Duration

	services *watchcache.Cache[*corev1.Service]
	pods     *watchcache.Cache[*corev1.Pod]
	slices   *watchcache.Cache[*discovery.EndpointSlice]
	nodes    nodeCache

	reconciler  *endpointslicerec.Reconciler
	sliceTrack  *endpointsliceutil.EndpointSliceTracker
	triggerTime *endpointsliceutil.TriggerTimeTracker
	topology    *topologycache.TopologyCache

	queue         workqueue.TypedRateLimitingInterface[string]
	topologyQueue workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{caches: cfg.Caches, client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log,
		logger:      logr.FromSlogHandler(cfg.Log.Handler()).V(4), // the library logs node details at info level
		workers:     cfg.Workers,
		batchPeriod: cfg.BatchPeriod,
		sliceTrack:  endpointsliceutil.NewEndpointSliceTracker(),
		triggerTime: endpointsliceutil.NewTriggerTimeTracker(),
		topology:    topologycache.NewTopologyCache(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(serviceRateLimiter(),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "endpoint_slice"}),
		topologyQueue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
	}
	if c.workers <= 0 {
		c.workers = defaultWorkers
	}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	var err error
	if c.services, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("services"),
		watchcache.Handlers[*corev1.Service]{Add: c.enqueueService, Update: func(_, cur *corev1.Service) { c.enqueueService(cur) }, Remove: c.enqueueService}); err != nil {
		return nil, err
	}
	if c.pods, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("pods"),
		controllers.ServicePodHandlers(c.services, c.queue, c.batchPeriod, c.log)); err != nil {
		return nil, err
	}
	if c.slices, err = controllers.Shared(c.caches, discovery.SchemeGroupVersion.WithResource("endpointslices"),
		watchcache.Handlers[*discovery.EndpointSlice]{Add: c.sliceAdded, Update: c.sliceUpdated, Remove: c.sliceDeleted}); err != nil {
		return nil, err
	}
	if c.nodes.cache, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("nodes"),
		nodeHandlers(func() { c.topologyQueue.Add("nodes") })); err != nil {
		return nil, err
	}
	c.reconciler = endpointslicerec.NewReconciler(c.client, c.nodes, maxEndpointsPerSlice, c.sliceTrack, c.topology,
		c.recorder, ManagedBy, endpointslicerec.WithPreferSameTrafficDistributionEnabled(true))
	return c, nil
}

// serviceRateLimiter is upstream's: per-Service exponential backoff from
// 1s to 1000s, and 10 syncs a second overall with bursts of 100.
func serviceRateLimiter() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, 1000*time.Second),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)})
}

// Run follows storage and syncs Services until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	controllers.RunWorkerPools(ctx, []<-chan struct{}{c.services.Synced(), c.pods.Synced(), c.slices.Synced(), c.nodes.cache.Synced()},
		controllers.WorkerPool{Queue: c.queue, Workers: c.workers, ProcessNext: c.processNext},
		controllers.WorkerPool{Queue: c.topologyQueue, Workers: 1, ProcessNext: func(context.Context) bool { return c.processTopology() }})
}

func (c *Controller) processNext(ctx context.Context) bool {
	return controllers.ProcessNextWithRetries(ctx, c.queue, c.sync, controllers.Retries{Max: maxRetries, Log: c.log,
		Retry: "syncing the EndpointSlices of a Service failed, will retry", Drop: "syncing the EndpointSlices of a Service failed too often, dropped until it changes"})
}

// processTopology hands the nodes to the topology cache and queues the
// Services whose hints it finds overloaded.
func (c *Controller) processTopology() bool {
	key, quit := c.topologyQueue.Get()
	if quit {
		return false
	}
	defer c.topologyQueue.Done(key)
	nodes, _ := c.nodes.List(labelsEverything)
	c.topology.SetNodes(c.logger, nodes)
	for _, svc := range c.topology.GetOverloadedServices() {
		c.queue.Add(svc)
	}
	return true
}
