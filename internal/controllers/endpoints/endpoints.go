// Package endpoints is kube-controller-manager's Endpoints controller
// (endpoints-controller), as upstream's pkg/controller/endpoint: for
// every Service with a selector (not ExternalName) it keeps an Endpoints
// object of the Service's name whose subsets list the matched pods'
// addresses, ready ones under addresses and the others under
// notReadyAddresses (all under addresses with publishNotReadyAddresses),
// on each Service port resolved against the pod's container ports; with
// the Service's labels plus endpoints.kubernetes.io/managed-by and, for a
// headless Service, service.kubernetes.io/headless; the
// endpoints.kubernetes.io/last-change-trigger-time annotation; and at
// most 1000 addresses, over which it truncates and sets
// endpoints.kubernetes.io/over-capacity. When a Service goes its
// Endpoints are deleted, also those found at start without a Service.
//
// It reads Services, Pods and Endpoints from storage through watches and
// writes only as a client of the server, as kube-controller-manager's
// endpoint-controller service account, through admission; events come
// from "endpoint-controller". Services without a selector, such as
// default/kubernetes whose Endpoints kube-apiserver keeps, are left alone.
package endpoints

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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
// its events and the value of its Endpoints' managed-by label.
const (
	Name      = controllers.EndpointsControllerName
	Component = "endpoint-controller"
	// LabelManagedBy marks the Endpoints this controller keeps.
	LabelManagedBy = "endpoints.kubernetes.io/managed-by"
	// overCapacityValue is the value of the over-capacity annotation.
	overCapacityValue = "truncated"
	// leaderElectionAnnotation marks Endpoints used as leader locks,
	// which the leftover sweep leaves alone.
	leaderElectionAnnotation = "control-plane.alpha.kubernetes.io/leader"

	defaultWorkers = 5
	maxRetries     = 15
)

// User is kube-controller-manager's endpoint-controller service account.
var User = controllers.ControllerUser("endpoint-controller")

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
	// BatchPeriod delays the sync that follows a pod change
	// (--endpoint-updates-batch-period, 0 by default).
	BatchPeriod time.Duration
}

// Controller keeps the Endpoints of Services.
type Controller struct {
	caches      *controllers.Caches
	ownCaches   bool // caches are the controller's own, started by Run
	client      kubernetes.Interface
	recorder    record.EventRecorder
	log         *slog.Logger
	workers     int
	batchPeriod time.Duration

	services  *watchcache.Cache[*corev1.Service]
	pods      *watchcache.Cache[*corev1.Pod]
	endpoints *watchcache.Cache[*corev1.Endpoints]

	triggerTime *endpointsliceutil.TriggerTimeTracker
	stale       *staleTracker
	queue       workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{caches: cfg.Caches, client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log,
		workers: cfg.Workers, batchPeriod: cfg.BatchPeriod,
		triggerTime: endpointsliceutil.NewTriggerTimeTracker(), stale: &staleTracker{versions: map[types.NamespacedName]string{}},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "endpoint"}),
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
	if c.endpoints, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("endpoints"),
		watchcache.Handlers[*corev1.Endpoints]{Remove: c.endpointsDeleted}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run follows storage and syncs Services until ctx ends; once the caches
// are filled, every Endpoints object is queued once, so that those whose
// Service went while the controller was not running are deleted.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	controllers.RunWorkerPools(ctx, []<-chan struct{}{c.services.Synced(), c.pods.Synced(), c.endpoints.Synced()},
		controllers.WorkerPool{Queue: c.queue, Workers: c.workers, ProcessNext: c.processNext},
		controllers.WorkerPool{Workers: 1, ProcessNext: func(context.Context) bool { c.queueLeftovers(); return false }})
}

func (c *Controller) processNext(ctx context.Context) bool {
	return controllers.ProcessNextWithRetries(ctx, c.queue, c.sync, controllers.Retries{Max: maxRetries, Log: c.log,
		Retry: "syncing the Endpoints of a Service failed, will retry", Drop: "syncing the Endpoints of a Service failed too often, dropped until it changes"})
}

// queueLeftovers queues every Endpoints object but leader locks.
func (c *Controller) queueLeftovers() {
	for _, ns := range c.endpoints.Namespaces() {
		for _, ep := range c.endpoints.List(ns, func(ep *corev1.Endpoints) bool {
			_, lock := ep.Annotations[leaderElectionAnnotation]
			return !lock
		}) {
			c.queue.Add(ep.Namespace + "/" + ep.Name)
		}
	}
}

func (c *Controller) enqueueService(svc *corev1.Service) { c.queue.Add(svc.Namespace + "/" + svc.Name) }

func (c *Controller) endpointsDeleted(ep *corev1.Endpoints) {
	c.queue.Add(ep.Namespace + "/" + ep.Name)
}

// staleTracker remembers, per Endpoints, the resourceVersion this
// controller has replaced, so a sync reading that version from a lagging
// cache waits instead of writing from it.
type staleTracker struct {
	mu       sync.Mutex
	versions map[types.NamespacedName]string
}

func (t *staleTracker) replaced(ep *corev1.Endpoints) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.versions[types.NamespacedName{Namespace: ep.Namespace, Name: ep.Name}] = ep.ResourceVersion
}

func (t *staleTracker) isStale(ep *corev1.Endpoints) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.versions[types.NamespacedName{Namespace: ep.Namespace, Name: ep.Name}]
	return ok && v == ep.ResourceVersion
}

func (t *staleTracker) forget(namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.versions, types.NamespacedName{Namespace: namespace, Name: name})
}

func splitKey(key string) (namespace, name string) {
	namespace, name, _ = strings.Cut(key, "/")
	return namespace, name
}
