// Package servicecidrs is kube-controller-manager's ServiceCIDR controller
// (service-cidr-controller), as upstream's pkg/controller/servicecidrs:
//
//   - every ServiceCIDR not being deleted, the default "kubernetes" one
//     included, gets the networking.k8s.io/service-cidr-finalizer (a
//     strategic merge patch) and the condition Ready=True "Kubernetes
//     Service CIDR is ready" (a server-side apply of its status, field
//     manager service-cidr-controller, forced);
//   - a ServiceCIDR being deleted keeps its finalizer while an IPAddress
//     of the Service allocator (managed by ipallocator.k8s.io) is held by
//     it and by no other ServiceCIDR, unless another ServiceCIDR contains
//     its whole range: it then says so with Ready=False, reason
//     Terminating. Otherwise the finalizer is removed once the deletion
//     is a grace period (10 s) old, which leaves the API servers' allocators
//     time to stop handing out its addresses;
//   - a ServiceCIDR is synced again when it changes, when one overlapping
//     it is created, and when an IPAddress it holds is created or deleted;
//     a failed sync is retried, rate-limited, up to 15 times. There is no
//     periodic resync.
//
// Its one event is the warning KubernetesServiceCIDRError, when the Ready
// condition cannot be written. It reads ServiceCIDRs and IPAddresses from
// the process's shared watch caches and writes as kube-controller-manager's
// service-cidrs-controller service account, through admission. It is not
// the default ServiceCIDR's controller (kube-apiserver's, in
// internal/controllers), nor the allocator (internal/ipallocator).
package servicecidrs

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name, and also the source of its
// events and the field manager of the Ready condition it applies.
const Name = "service-cidr-controller"

// Component is its events' source; FieldManager the manager of its
// status applies.
const (
	Component    = Name
	FieldManager = Name
)

// User is kube-controller-manager's service-cidrs-controller service
// account (bound to system:controller:service-cidrs-controller).
var User = controllers.ControllerUser("service-cidrs-controller")

// Finalizer is the finalizer the controller keeps on ServiceCIDRs.
const Finalizer = "networking.k8s.io/service-cidr-finalizer"

// allocatorManager is the networking.k8s.io/managed-by label value of the
// IPAddresses of Services' cluster IPs: only those hold a ServiceCIDR.
const allocatorManager = "ipallocator.k8s.io"

const (
	// DefaultDeletionGracePeriod is how old a deletion must be before the
	// finalizer goes (upstream's, not a flag).
	DefaultDeletionGracePeriod = 10 * time.Second
	// defaultWorkers is kube-controller-manager's (not a flag).
	defaultWorkers = 5
	// maxRetries is how often a failing ServiceCIDR is retried before it
	// waits for its next change.
	maxRetries = 15
)

// Config is what the controller needs.
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
	// DeletionGracePeriod is how old a ServiceCIDR's deletion must be
	// before its finalizer is removed; zero is
	// DefaultDeletionGracePeriod. Tests shorten it.
	DeletionGracePeriod time.Duration
}

// Controller keeps ServiceCIDRs' finalizer and Ready condition.
type Controller struct {
	client    kubernetes.Interface
	recorder  record.EventRecorder
	log       *slog.Logger
	grace     time.Duration
	now       func() time.Time
	caches    *controllers.Caches
	ownCaches bool
	cidrs     *watchcache.Cache[*networkingv1.ServiceCIDR]
	addresses *watchcache.Cache[*networkingv1.IPAddress]
	queue     workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log, grace: cfg.DeletionGracePeriod, now: time.Now,
		caches: cfg.Caches,
		// named as upstream's queue, for its workqueue_* series
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "ipaddresses"})}
	if c.grace == 0 {
		c.grace = DefaultDeletionGracePeriod
	}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	var err error
	c.cidrs, err = controllers.Shared(c.caches, networkingv1.SchemeGroupVersion.WithResource("servicecidrs"),
		watchcache.Handlers[*networkingv1.ServiceCIDR]{Add: c.cidrAdded,
			Update: func(_, cur *networkingv1.ServiceCIDR) { c.cidrChanged(cur) }, Remove: c.cidrChanged})
	if err != nil {
		return nil, err
	}
	c.addresses, err = controllers.Shared(c.caches, networkingv1.SchemeGroupVersion.WithResource("ipaddresses"),
		watchcache.Handlers[*networkingv1.IPAddress]{Add: c.addressChanged, Remove: c.addressChanged})
	return c, err
}

// Run keeps ServiceCIDRs until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx)
	}
	controllers.RunWorkers(ctx, c.queue, []<-chan struct{}{c.cidrs.Synced(), c.addresses.Synced()}, defaultWorkers, c.processNext)
}

func (c *Controller) processNext(ctx context.Context) bool {
	return controllers.ProcessNextWithRetries(ctx, c.queue, c.sync, controllers.Retries{Max: maxRetries, Log: c.log,
		Retry: "syncing a ServiceCIDR failed, will retry", Drop: "syncing a ServiceCIDR failed too often, dropped until it changes"})
}

// cidrAdded queues a new ServiceCIDR and those it overlaps: one being
// deleted may now be covered by it.
func (c *Controller) cidrAdded(sc *networkingv1.ServiceCIDR) {
	c.queue.Add(sc.Name)
	for _, p := range prefixes(sc) {
		for _, other := range c.cidrsWith(func(q netip.Prefix) bool { return q.Overlaps(p) }) {
			c.queue.Add(other.Name)
		}
	}
}

// cidrChanged queues a changed or deleted ServiceCIDR alone.
func (c *Controller) cidrChanged(sc *networkingv1.ServiceCIDR) { c.queue.Add(sc.Name) }

// addressChanged queues the ServiceCIDRs holding a Service's IPAddress
// that came or went: it may block or unblock their deletion.
func (c *Controller) addressChanged(ip *networkingv1.IPAddress) {
	addr, ok := allocatedAddress(ip)
	if !ok {
		return
	}
	for _, sc := range c.holders(addr) {
		c.queue.Add(sc.Name)
	}
}

// allocatedAddress is the address of ip when the Service allocator
// manages it.
func allocatedAddress(ip *networkingv1.IPAddress) (netip.Addr, bool) {
	if ip.Labels[networkingv1.LabelManagedBy] != allocatorManager {
		return netip.Addr{}, false
	}
	addr, err := netip.ParseAddr(ip.Name)
	return addr, err == nil
}

// cidrsWith lists the ServiceCIDRs with a CIDR that match accepts.
func (c *Controller) cidrsWith(match func(netip.Prefix) bool) []*networkingv1.ServiceCIDR {
	return c.cidrs.ListAll(func(sc *networkingv1.ServiceCIDR) bool { return anyPrefix(sc, match) })
}

// holders lists the ServiceCIDRs a Service could have addr from.
func (c *Controller) holders(addr netip.Addr) []*networkingv1.ServiceCIDR {
	return c.cidrsWith(func(p netip.Prefix) bool { return holdsAddress(p, addr) })
}
