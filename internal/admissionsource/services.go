package admissionsource

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// ServiceLookup reads Services from storage (for webhook service references).
type ServiceLookup struct {
	store storage.Store
	cat   *registry.Catalogue
	res   *registry.Resource
}

// NewServiceLookup returns a lookup over store.
func NewServiceLookup(store storage.Store, cat *registry.Catalogue) *ServiceLookup {
	res, _ := cat.Lookup(corev1.SchemeGroupVersion.WithResource("services"))
	return &ServiceLookup{store: store, cat: cat, res: res}
}

// GetService returns the service, or an error when it does not exist.
func (l *ServiceLookup) GetService(ctx context.Context, namespace, name string) (*corev1.Service, error) {
	kv, err := l.store.Get(ctx, layout.Key(l.res, namespace, name))
	if err != nil {
		return nil, err
	}
	obj, err := layout.Decode(l.res, kv)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Service), nil
}

// EndpointSlices returns the EndpointSlices of a Service (label
// kubernetes.io/service-name).
func (l *ServiceLookup) EndpointSlices(ctx context.Context, namespace, service string) ([]*discoveryv1.EndpointSlice, error) {
	res, ok := l.cat.Lookup(discoveryv1.SchemeGroupVersion.WithResource("endpointslices"))
	if !ok {
		return nil, nil
	}
	page, err := l.store.List(ctx, layout.ListPrefix(res, namespace), storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*discoveryv1.EndpointSlice
	for _, kv := range page.Items {
		obj, err := layout.Decode(res, kv)
		if err != nil {
			return nil, err
		}
		if es := obj.(*discoveryv1.EndpointSlice); es.Labels[discoveryv1.LabelServiceName] == service {
			out = append(out, es)
		}
	}
	return out, nil
}
