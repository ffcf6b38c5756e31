package admissionsource

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/storage"
)

// ParamLookup reads the param objects of admission policies. Any served
// kind can be a param, custom resources included: the cache of a param
// resource is created, and started, on its first lookup, which reads
// storage until that cache has listed.
type ParamLookup struct {
	sources *Sources
}

var _ policies.ParamSource = (*ParamLookup)(nil)

// NewParamLookup returns a lookup that reads store at each call.
func NewParamLookup(store storage.Store, cat *registry.Catalogue) *ParamLookup {
	return NewSources(store, cat).Params()
}

// Params returns the lookup over the caches of param resources.
func (s *Sources) Params() *ParamLookup { return &ParamLookup{sources: s} }

// ResolveParamKind finds the served resource of kind gvk.
func (l *ParamLookup) ResolveParamKind(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, bool) {
	res, ok := l.sources.cat.LookupKind(gvk)
	if !ok {
		return schema.GroupVersionResource{}, false, false
	}
	return res.GroupVersionResource, res.Namespaced, true
}

// GetParam reads one object; a missing one is a NotFound StatusError.
func (l *ParamLookup) GetParam(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	c := l.cache(gvr)
	if c == nil {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return c.Get(ctx, namespace, name)
}

// ListParams reads the objects sel selects in namespace (all namespaces
// when empty).
func (l *ParamLookup) ListParams(ctx context.Context, gvr schema.GroupVersionResource, namespace string, sel labels.Selector) ([]runtime.Object, error) {
	c := l.cache(gvr)
	if c == nil {
		return nil, nil
	}
	return c.List(ctx, namespace, sel)
}

// cache is the cache of gvr while gvr is served as the cache has it; nil
// when it is not served (a custom resource whose definition is gone).
func (l *ParamLookup) cache(gvr schema.GroupVersionResource) *Cache {
	res, ok := l.sources.cat.Lookup(gvr)
	if !ok {
		return nil
	}
	c := l.sources.For(gvr)
	if c == nil || c.res.Namespaced != res.Namespaced {
		return nil
	}
	return c
}
