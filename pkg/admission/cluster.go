package admission

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/features"
)

// ObjectCache reads objects of the cluster from watch-fed caches, as
// upstream's plugins read their informers: no storage read per request. A
// write this server has acknowledged is visible to the next request. The
// objects are in the version the server stores (a *corev1.LimitRange for
// limitranges) and shared: a plugin must not modify them, nor the slices
// ListCachedObjects returns.
type ObjectCache interface {
	// GetCachedObject returns one object, or a NotFound StatusError when it
	// does not exist or its resource is not served.
	GetCachedObject(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error)
	// ListCachedObjects returns the objects of namespace ("" for every
	// namespace, and for cluster-scoped resources) that sel selects (nil
	// selects all), by namespace then name; nothing when the resource is
	// not served.
	ListCachedObjects(ctx context.Context, gvr schema.GroupVersionResource, namespace string, sel labels.Selector) ([]runtime.Object, error)
}

// ResourceCache reads the cached objects of one resource: what a plugin
// holds for each resource it reads, as an upstream plugin holds a lister,
// instead of naming the resource on every lookup. Get and List are
// ObjectCache's GetCachedObject and ListCachedObjects for that resource,
// with the same contract.
type ResourceCache interface {
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
	List(ctx context.Context, namespace string, sel labels.Selector) ([]runtime.Object, error)
}

// ResourceCaches is implemented by an ObjectCache that hands out a
// ResourceCache of its own per resource (the server's finds the resource's
// cache once, not on every lookup).
type ResourceCaches interface {
	ResourceCache(gvr schema.GroupVersionResource) ResourceCache
}

// CacheOf returns the ResourceCache of gvr in cache: cache's own when it
// is a ResourceCaches, otherwise one that names gvr on every call.
func CacheOf(cache ObjectCache, gvr schema.GroupVersionResource) ResourceCache {
	if rc, ok := cache.(ResourceCaches); ok {
		return rc.ResourceCache(gvr)
	}
	return namedResource{cache, gvr}
}

// namedResource is a ResourceCache over any ObjectCache.
type namedResource struct {
	cache ObjectCache
	gvr   schema.GroupVersionResource
}

func (r namedResource) Get(ctx context.Context, namespace, name string) (runtime.Object, error) {
	return r.cache.GetCachedObject(ctx, r.gvr, namespace, name)
}

func (r namedResource) List(ctx context.Context, namespace string, sel labels.Selector) ([]runtime.Object, error) {
	return r.cache.ListCachedObjects(ctx, r.gvr, namespace, sel)
}

// ObjectCreator creates objects through the API server, as the server's own
// loopback client (system:apiserver): authorization, admission and
// validation apply as to any request. It returns the server's StatusError
// (AlreadyExists, Forbidden, ...) when the create fails.
type ObjectCreator interface {
	CreateObject(ctx context.Context, gvr schema.GroupVersionResource, namespace string, obj runtime.Object) error
}

// StatusUpdater replaces the status subresource of objects through the API
// server, as the server's loopback client (system:apiserver), with
// optimistic concurrency: a resourceVersion that is not the current one is
// a Conflict StatusError. It returns the object as stored, in obj's type.
type StatusUpdater interface {
	UpdateObjectStatus(ctx context.Context, gvr schema.GroupVersionResource, namespace string, obj runtime.Object) (runtime.Object, error)
}

// FeatureGates reports whether a feature gate (--feature-gates) is on.
type FeatureGates interface {
	Enabled(name string) bool
}

// defaultGates are kube-apiserver 1.37's defaults.
type defaultGates struct{}

func (defaultGates) Enabled(name string) bool { return features.Default(name) }

// Gates returns the feature gates of pc, or upstream's defaults when none
// were given.
func (pc PluginContext) Gates() FeatureGates {
	if pc.Features == nil {
		return defaultGates{}
	}
	return pc.Features
}
