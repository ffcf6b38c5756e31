package admissionsource

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// CachedObjects is admission.ObjectCache over the sources: each resource a
// plugin reads gets its watch-fed cache on first use.
type CachedObjects struct{ sources *Sources }

var _ admission.ObjectCache = CachedObjects{}

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
