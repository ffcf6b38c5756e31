package admissionsource

import (
	"context"
	"errors"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
)

// NamespaceLookup reads namespaces from storage for admission plugins. It
// reads storage on every call, so it is never stale, but decodes a
// namespace only when its revision changed: the namespaces it returns are
// shared and must not be modified.
type NamespaceLookup struct {
	store storage.Store
	res   *registry.Resource

	mu      sync.Mutex
	decoded map[string]decodedNamespace // by name
}

type decodedNamespace struct {
	rev int64
	ns  *corev1.Namespace
}

// maxDecodedNamespaces bounds the decoded namespaces kept; past it the
// cache starts over.
const maxDecodedNamespaces = 4096

var _ admission.NamespaceLookup = (*NamespaceLookup)(nil)

// NewNamespaceLookup returns a lookup over store.
func NewNamespaceLookup(store storage.Store, cat *registry.Catalogue) *NamespaceLookup {
	res, _ := cat.Lookup(corev1.SchemeGroupVersion.WithResource("namespaces"))
	return &NamespaceLookup{store: store, res: res, decoded: make(map[string]decodedNamespace)}
}

// GetNamespace returns the namespace, or a NotFound StatusError.
func (l *NamespaceLookup) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	kv, err := l.store.Get(ctx, layout.Key(l.res, "", name))
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, apierrors.NewNotFound(l.res.GroupResource(), name)
		}
		return nil, err
	}
	l.mu.Lock()
	d, ok := l.decoded[name]
	l.mu.Unlock()
	if ok && d.rev == kv.ModRevision {
		return d.ns, nil
	}
	obj, err := layout.Decode(l.res, kv)
	if err != nil {
		return nil, err
	}
	ns := obj.(*corev1.Namespace)
	l.mu.Lock()
	if len(l.decoded) >= maxDecodedNamespaces {
		clear(l.decoded)
	}
	l.decoded[name] = decodedNamespace{rev: kv.ModRevision, ns: ns}
	l.mu.Unlock()
	return ns, nil
}
