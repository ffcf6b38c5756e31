package admissionsource

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Lister reads one kind of object, typed, from its cache: what a
// compiled-in plugin needs of, say, service accounts is
//
//	sa := admissionsource.ListerFor[*corev1.ServiceAccount](sources, admissionsource.ServiceAccounts)
//
// T must be the Go type of the resource's objects in the cache's version.
// The objects are shared and must not be modified.
type Lister[T runtime.Object] struct {
	cache *Cache // nil when the resource is not served
	gr    schema.GroupResource
}

// ListerFor returns the typed lister over the cache of gvr; its methods
// fail with NotFound (Get) or return nothing (List) when gvr is not served.
func ListerFor[T runtime.Object](s *Sources, gvr schema.GroupVersionResource) Lister[T] {
	return Lister[T]{cache: s.For(gvr), gr: gvr.GroupResource()}
}

// Get returns the object, or a NotFound StatusError.
func (l Lister[T]) Get(ctx context.Context, namespace, name string) (T, error) {
	var zero T
	if l.cache == nil {
		return zero, apierrors.NewNotFound(l.gr, name)
	}
	obj, err := l.cache.Get(ctx, namespace, name)
	if err != nil {
		return zero, err
	}
	return obj.(T), nil
}

// List returns the objects of namespace ("" for all) that sel selects (nil
// selects all), by namespace then name.
func (l Lister[T]) List(ctx context.Context, namespace string, sel labels.Selector) ([]T, error) {
	if l.cache == nil {
		return nil, nil
	}
	objs, err := l.cache.List(ctx, namespace, sel)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(objs))
	for i, obj := range objs {
		out[i] = obj.(T)
	}
	return out, nil
}
