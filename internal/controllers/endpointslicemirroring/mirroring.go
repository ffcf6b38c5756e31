// Package endpointslicemirroring is kube-controller-manager's EndpointSlice
// mirroring controller (endpointslice-mirroring-controller), as upstream's
// pkg/controller/endpointslicemirroring: the Endpoints object of a Service
// without selector, written by someone else than the Endpoints
// controller, is mirrored into EndpointSlices: one per address type (IPv4,
// IPv6) of each of its repacked subsets, at most 1000 addresses a subset
// (ready ones first), named from generateName "<endpoints>-", with the
// Endpoints' labels and annotations (but the trigger-time and
// last-applied ones), the kubernetes.io/service-name label and
// endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io,
// controlled by the Endpoints. Endpoints labelled
// endpointslice.kubernetes.io/skip-mirror=true, leader-election locks,
// and the Endpoints of a Service that is gone or has a selector have
// their mirrored slices deleted. Addresses left out are reported by
// InvalidIPAddress and TooManyAddressesToMirror warnings on the
// Endpoints.
//
// It reads Endpoints, Services and EndpointSlices from storage through
// watches and writes only as a client of the server, as
// kube-controller-manager's endpointslicemirroring-controller service
// account, through admission; events come from
// "endpoint-slice-mirroring-controller".
package endpointslicemirroring

import (
	"context"
	"log/slog"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	endpointsliceutil "k8s.io/endpointslice/util"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name; Component the source of
// its events; ManagedBy the value of its slices'
// endpointslice.kubernetes.io/managed-by label.
const (
	Name      = controllers.EndpointSliceMirroringControllerName
	Component = "endpoint-slice-mirroring-controller"
	ManagedBy = "endpointslicemirroring-controller.k8s.io"

	// DefaultMaxEndpointsPerSubset is kube-controller-manager's
	// --mirroring-max-endpoints-per-subset default.
	DefaultMaxEndpointsPerSubset = 1000
	// defaultWorkers is --mirroring-concurrent-service-endpoint-syncs's
	// default.
	defaultWorkers = 5
	// maxRetries is how often a failing Endpoints is retried before it
	// waits for its next change.
	maxRetries = 15
	// leaderElectionAnnotation marks an Endpoints used as a leader lock.
	leaderElectionAnnotation = "control-plane.alpha.kubernetes.io/leader"
)

// User is kube-controller-manager's endpointslicemirroring-controller
// service account.
var User = controllers.ControllerUser("endpointslicemirroring-controller")

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	// Client writes as User; Recorder records events as Component.
	Client   kubernetes.Interface
	Recorder record.EventRecorder
	Log      *slog.Logger
	// Workers sync that many Endpoints at once; 0 means 5.
	Workers int
	// MaxEndpointsPerSubset is the most addresses of a subset mirrored; 0
	// means DefaultMaxEndpointsPerSubset.
	MaxEndpointsPerSubset int
	// BatchPeriod delays the sync that follows a change of a mirrored
	// slice (--mirroring-endpointslice-updates-batch-period, 0 by default).
	BatchPeriod time.Duration
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
}

// Controller mirrors Endpoints into EndpointSlices.
type Controller struct {
	caches       *controllers.Caches
	ownCaches    bool // caches are the controller's own, started by Run
	client       kubernetes.Interface
	recorder     record.EventRecorder
	log          *slog.Logger
	workers      int
	maxPerSubset int
	batchPeriod  time.Duration

	endpoints *watchcache.Cache[*corev1.Endpoints]
	services  *watchcache.Cache[*corev1.Service]
	slices    *watchcache.Cache[*discovery.EndpointSlice]

	tracker *endpointsliceutil.EndpointSliceTracker
	queue   workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log,
		workers: cfg.Workers, maxPerSubset: cfg.MaxEndpointsPerSubset, batchPeriod: cfg.BatchPeriod,
		tracker: endpointsliceutil.NewEndpointSliceTracker(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(endpointsRateLimiter(),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "endpoint_slice_mirroring"}),
	}
	if c.workers <= 0 {
		c.workers = defaultWorkers
	}
	if c.maxPerSubset <= 0 {
		c.maxPerSubset = DefaultMaxEndpointsPerSubset
	}
	if c.caches = cfg.Caches; c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	var err error
	if c.endpoints, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("endpoints"),
		watchcache.Handlers[*corev1.Endpoints]{Add: c.queueMirroredEndpoints, Update: c.endpointsUpdated, Remove: c.queueMirroredEndpoints}); err != nil {
		return nil, err
	}
	if c.services, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("services"),
		watchcache.Handlers[*corev1.Service]{Add: c.queueSelectorlessService, Update: c.serviceUpdated, Remove: c.queueSelectorlessService}); err != nil {
		return nil, err
	}
	if c.slices, err = controllers.Shared(c.caches, discovery.SchemeGroupVersion.WithResource("endpointslices"),
		watchcache.Handlers[*discovery.EndpointSlice]{Add: c.sliceAdded, Update: c.sliceUpdated, Remove: c.sliceDeleted}); err != nil {
		return nil, err
	}
	return c, nil
}

// endpointsRateLimiter is upstream's: per-Endpoints exponential backoff
// from 1s to 100s, and 10 syncs a second overall with bursts of 100.
func endpointsRateLimiter() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, 100*time.Second),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)})
}

// Run follows storage and syncs Endpoints until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	controllers.RunWorkers(ctx, c.queue, []<-chan struct{}{c.endpoints.Synced(), c.services.Synced(), c.slices.Synced()},
		c.workers, c.processNext)
}

func (c *Controller) processNext(ctx context.Context) bool {
	return controllers.ProcessNextWithRetries(ctx, c.queue, c.sync, controllers.Retries{Max: maxRetries, Log: c.log,
		Retry: "mirroring the EndpointSlices of an Endpoints failed, will retry", Drop: "mirroring the EndpointSlices of an Endpoints failed too often, dropped until it changes"})
}
