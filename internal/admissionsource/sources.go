package admissionsource

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// The resources compiled-in plugins read, each cached on first use with
// Sources.For.
var (
	Namespaces      = corev1.SchemeGroupVersion.WithResource("namespaces")
	Secrets         = corev1.SchemeGroupVersion.WithResource("secrets")
	Services        = corev1.SchemeGroupVersion.WithResource("services")
	ServiceAccounts = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
	LimitRanges     = corev1.SchemeGroupVersion.WithResource("limitranges")
	ResourceQuotas  = corev1.SchemeGroupVersion.WithResource("resourcequotas")
	Nodes           = corev1.SchemeGroupVersion.WithResource("nodes")
	EndpointSlices  = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
	PriorityClasses = schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")
	RuntimeClasses  = nodev1.SchemeGroupVersion.WithResource("runtimeclasses")
	StorageClasses  = storagev1.SchemeGroupVersion.WithResource("storageclasses")
	IngressClasses  = networkingv1.SchemeGroupVersion.WithResource("ingressclasses")
)

// Sources are the watch-fed caches admission reads, one per resource
// version, created on first use (For). Until Start they are not running
// and read storage directly; from Start, every cache, including those
// created later (params of any kind), runs until Start's context ends.
// Observe feeds them the writes made through this instance.
type Sources struct {
	store storage.Store
	cat   *registry.Catalogue

	mu  sync.Mutex      // serialises creating caches and Start
	ctx context.Context // nil until Start
	log *slog.Logger
	// current is an immutable index of the caches, read without locks on
	// every lookup (For) and every write (Handles, Observe).
	current atomic.Pointer[cacheIndex]
	// atStart are the caches that existed when Start ran: those the
	// admission chain needs from the start (Synced).
	atStart atomic.Pointer[[]*Cache]
}

type cacheIndex struct {
	byGVR map[schema.GroupVersionResource]*Cache
	byGR  map[schema.GroupResource][]*Cache
	// byResource is byGVR by resource name alone, for lookups: a string
	// key hashes in a fraction of the time a three-string struct does.
	byResource map[string][]*Cache
}

// lookup returns the cache of gvr, nil when there is none.
func (x *cacheIndex) lookup(gvr schema.GroupVersionResource) *Cache {
	for _, c := range x.byResource[gvr.Resource] {
		if c.res.GroupVersionResource == gvr {
			return c
		}
	}
	return nil
}

// with returns a copy of x with c added.
func (x *cacheIndex) with(c *Cache) *cacheIndex {
	next := &cacheIndex{byGVR: make(map[schema.GroupVersionResource]*Cache, len(x.byGVR)+1),
		byGR: make(map[schema.GroupResource][]*Cache, len(x.byGR)+1), byResource: make(map[string][]*Cache, len(x.byResource)+1)}
	for gvr, c := range x.byGVR {
		next.byGVR[gvr] = c
	}
	for gr, cs := range x.byGR {
		next.byGR[gr] = cs
	}
	for r, cs := range x.byResource {
		next.byResource[r] = cs
	}
	gvr := c.res.GroupVersionResource
	next.byGVR[gvr] = c
	next.byGR[gvr.GroupResource()] = append(append([]*Cache(nil), x.byGR[gvr.GroupResource()]...), c)
	next.byResource[gvr.Resource] = append(append([]*Cache(nil), x.byResource[gvr.Resource]...), c)
	return next
}

// NewSources returns sources over store, not started.
func NewSources(store storage.Store, cat *registry.Catalogue) *Sources {
	s := &Sources{store: store, cat: cat}
	s.current.Store(&cacheIndex{})
	return s
}

// For returns the cache of gvr, created (and run, once started) on first
// use; nil when gvr is not served.
func (s *Sources) For(gvr schema.GroupVersionResource) *Cache {
	if c := s.current.Load().lookup(gvr); c != nil {
		return c
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.current.Load().lookup(gvr); c != nil {
		return c
	}
	res, ok := s.cat.Lookup(gvr)
	if !ok {
		return nil
	}
	c := NewCache(s.store, res)
	s.current.Store(s.current.Load().with(c))
	if s.ctx != nil {
		go c.Run(s.ctx, s.log)
	}
	return c
}

// Start runs every cache until ctx ends, the ones created later too,
// logging their failures to log (nil: not logged). Call it after the
// storage is bootstrapped: writes that bypass the API (and so Observe) are
// seen through the watch only.
func (s *Sources) Start(ctx context.Context, log *slog.Logger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx != nil {
		return
	}
	s.ctx, s.log = ctx, log
	atStart := make([]*Cache, 0, len(s.current.Load().byGVR))
	for _, c := range s.current.Load().byGVR {
		atStart = append(atStart, c)
		go c.Run(ctx, log)
	}
	s.atStart.Store(&atStart)
}

// WaitSynced waits until every cache created so far has listed once.
func (s *Sources) WaitSynced(ctx context.Context) error {
	for _, c := range s.current.Load().byGVR {
		if err := c.WaitSynced(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Synced reports whether every cache that existed when Start ran has
// listed once (false before Start): the informer-sync check of /readyz,
// which like kube-apiserver's covers the informers started with the
// server. Caches created later, for a policy's params or for a
// controller, sync on their own and do not make a ready server unready.
func (s *Sources) Synced() bool {
	atStart := s.atStart.Load()
	if atStart == nil {
		return false
	}
	for _, c := range *atStart {
		if !c.Synced() {
			return false
		}
	}
	return true
}

// Handles reports whether writes of gvr (any version) reach a cache.
func (s *Sources) Handles(gvr schema.GroupVersionResource) bool {
	return len(s.current.Load().byGR[gvr.GroupResource()]) > 0
}

// Observe applies a write made through this instance to the caches of its
// resource, before the write returns: gvr is the resource as written, obj
// what was stored (for a delete, what was deleted).
func (s *Sources) Observe(ctx context.Context, gvr schema.GroupVersionResource, deleted bool, obj runtime.Object) {
	for _, c := range s.current.Load().byGR[gvr.GroupResource()] {
		c.Observe(ctx, gvr.Version, deleted, obj)
	}
}
