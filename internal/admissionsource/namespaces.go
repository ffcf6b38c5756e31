package admissionsource

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
)

// NamespaceLookup reads namespaces for admission plugins from the
// namespace cache: a map read on the hot path (every namespaced write).
// The namespaces it returns are shared and must not be modified.
type NamespaceLookup struct {
	cache *Cache
}

var _ admission.NamespaceLookup = (*NamespaceLookup)(nil)

// NewNamespaceLookup returns a lookup that reads store at each call (its
// cache is never started), for tests and tools without a running server.
func NewNamespaceLookup(store storage.Store, cat *registry.Catalogue) *NamespaceLookup {
	return NewSources(store, cat).Namespaces()
}

// Namespaces returns the lookup over the namespace cache.
func (s *Sources) Namespaces() *NamespaceLookup {
	return &NamespaceLookup{cache: s.For(Namespaces)}
}

// GetNamespace returns the namespace, or a NotFound StatusError.
func (l *NamespaceLookup) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	obj, err := l.cache.Get(ctx, "", name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Namespace), nil
}
