package admissionsource

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/storage"
)

// ParamLookup reads the param objects of admission policies from storage,
// at each request: a param written through any server is seen by the next
// request, with no cache to go stale. Any served kind can be a param,
// custom resources included.
type ParamLookup struct {
	store storage.Store
	cat   *registry.Catalogue
}

var _ policies.ParamSource = (*ParamLookup)(nil)

// NewParamLookup returns a lookup over store.
func NewParamLookup(store storage.Store, cat *registry.Catalogue) *ParamLookup {
	return &ParamLookup{store: store, cat: cat}
}

// ResolveParamKind finds the served resource of kind gvk.
func (l *ParamLookup) ResolveParamKind(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, bool) {
	res, ok := l.cat.LookupKind(gvk)
	if !ok {
		return schema.GroupVersionResource{}, false, false
	}
	return res.GroupVersionResource, res.Namespaced, true
}

// GetParam reads one object; a missing one is a NotFound StatusError.
func (l *ParamLookup) GetParam(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	res, ok := l.cat.Lookup(gvr)
	if !ok {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	kv, err := l.store.Get(ctx, layout.Key(res, namespace, name))
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, apierrors.NewNotFound(res.GroupResource(), name)
		}
		return nil, err
	}
	return layout.Decode(res, kv)
}

// ListParams reads the objects sel selects in namespace (all namespaces
// when empty).
func (l *ParamLookup) ListParams(ctx context.Context, gvr schema.GroupVersionResource, namespace string, sel labels.Selector) ([]runtime.Object, error) {
	res, ok := l.cat.Lookup(gvr)
	if !ok {
		return nil, nil
	}
	page, err := l.store.List(ctx, layout.ListPrefix(res, namespace), storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []runtime.Object
	for _, kv := range page.Items {
		obj, err := layout.Decode(res, kv)
		if err != nil {
			return nil, err
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		if sel.Matches(labels.Set(m.GetLabels())) {
			out = append(out, obj)
		}
	}
	return out, nil
}
