package admissionsource

import (
	"context"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// CachedObjects is admission.ObjectCache over the sources: each resource a
// plugin reads gets its watch-fed cache on first use.
type CachedObjects struct{ sources *Sources }

var (
	_ admission.ObjectCache    = CachedObjects{}
	_ admission.ResourceCaches = CachedObjects{}
)

// Objects returns the sources as a plugin's ObjectCache.
func (s *Sources) Objects() CachedObjects { return CachedObjects{sources: s} }

// GetCachedObject returns one object, or NotFound.
func (o CachedObjects) GetCachedObject(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	c := o.sources.For(gvr)
	if c == nil {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return c.Get(ctx, namespace, name)
}

// ListCachedObjects returns the objects of namespace that sel selects.
func (o CachedObjects) ListCachedObjects(ctx context.Context, gvr schema.GroupVersionResource, namespace string, sel labels.Selector) ([]runtime.Object, error) {
	c := o.sources.For(gvr)
	if c == nil {
		return nil, nil
	}
	return c.ListShared(ctx, namespace, sel)
}

// ResourceCache returns the reader of gvr's objects: it finds gvr's cache
// on its first lookup and keeps it (caches are never dropped).
func (o CachedObjects) ResourceCache(gvr schema.GroupVersionResource) admission.ResourceCache {
	return &resourceCache{sources: o.sources, gvr: gvr}
}

type resourceCache struct {
	sources *Sources
	gvr     schema.GroupVersionResource
	found   atomic.Pointer[Cache]
}

// cache is gvr's cache, nil while gvr is not served.
func (r *resourceCache) cache() *Cache {
	if c := r.found.Load(); c != nil {
		return c
	}
	c := r.sources.For(r.gvr)
	if c != nil {
		r.found.Store(c)
	}
	return c
}

func (r *resourceCache) Get(ctx context.Context, namespace, name string) (runtime.Object, error) {
	c := r.cache()
	if c == nil {
		return nil, apierrors.NewNotFound(r.gvr.GroupResource(), name)
	}
	return c.Get(ctx, namespace, name)
}

func (r *resourceCache) List(ctx context.Context, namespace string, sel labels.Selector) ([]runtime.Object, error) {
	c := r.cache()
	if c == nil {
		return nil, nil
	}
	return c.ListShared(ctx, namespace, sel)
}
