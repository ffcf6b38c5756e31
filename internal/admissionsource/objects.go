package admissionsource

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
)

// ObjectLookup reads single objects of any served resource from storage for
// compiled-in plugins (NodeRestriction's pods, nodes, PVCs...). Like the
// other lookups it reads storage at each call, so it is never stale.
type ObjectLookup struct {
	store storage.Store
	cat   *registry.Catalogue
}

var _ admission.ObjectLookup = (*ObjectLookup)(nil)

// NewObjectLookup returns a lookup over store.
func NewObjectLookup(store storage.Store, cat *registry.Catalogue) *ObjectLookup {
	return &ObjectLookup{store: store, cat: cat}
}

// GetObject reads one object; a missing one, or one of a resource not
// served, is a NotFound StatusError.
func (l *ObjectLookup) GetObject(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	res, ok := l.cat.Lookup(gvr)
	if !ok {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	kv, err := l.store.Get(ctx, layout.Key(res, namespace, name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, apierrors.NewNotFound(res.GroupResource(), name)
	}
	if err != nil {
		return nil, err
	}
	return layout.Decode(res, kv)
}
