package admissionsource

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

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

var (
	_ admission.NamespaceLookup     = (*NamespaceLookup)(nil)
	_ admission.LiveNamespaceLookup = (*NamespaceLookup)(nil)
)

// NewNamespaceLookup returns a lookup that reads store at each call (its
// cache is never started), for tests and tools without a running server.
func NewNamespaceLookup(store storage.Store, cat *registry.Catalogue) *NamespaceLookup {
	return NewSources(store, cat).Namespaces()
}

// Namespaces returns the lookup over the namespace cache.
func (s *Sources) Namespaces() *NamespaceLookup {
	return &NamespaceLookup{cache: s.For(Namespaces)}
}

// GetNamespace returns the namespace, or a NotFound StatusError. A
// namespace the cache lacks is looked up in storage before it is called
// missing, as kube-apiserver's lifecycle plugin and webhook namespace
// matcher do: a client can learn of a namespace (a watch of another
// instance, or of this one before its write observer ran) before the
// cache has it, and its create there must not be refused.
func (l *NamespaceLookup) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	obj, err := l.cache.Get(ctx, "", name)
	if err == nil {
		return obj.(*corev1.Namespace), nil
	}
	// Only on an error: apierrors.IsNotFound allocates even for a nil one.
	if apierrors.IsNotFound(err) && l.cache.Synced() {
		return l.GetNamespaceLive(ctx, name)
	}
	return nil, err
}

// GetNamespaceLive returns the namespace as storage holds it now, for a
// caller with reason to think the cache is behind.
func (l *NamespaceLookup) GetNamespaceLive(ctx context.Context, name string) (*corev1.Namespace, error) {
	obj, err := l.cache.getStored(ctx, "", name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Namespace), nil
}
