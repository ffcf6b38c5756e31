package admissionsource

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// ServiceLookup reads Services and their EndpointSlices (for webhook
// service references) from their caches.
type ServiceLookup struct {
	services *Cache
	slices   *Cache // nil when EndpointSlices are not served
}

// NewServiceLookup returns a lookup that reads store at each call.
func NewServiceLookup(store storage.Store, cat *registry.Catalogue) *ServiceLookup {
	return NewSources(store, cat).Services()
}

// Services returns the lookup over the service and endpoint slice caches.
func (s *Sources) Services() *ServiceLookup {
	return &ServiceLookup{services: s.For(Services), slices: s.For(EndpointSlices)}
}

// GetService returns the service, or a NotFound StatusError.
func (l *ServiceLookup) GetService(ctx context.Context, namespace, name string) (*corev1.Service, error) {
	obj, err := l.services.Get(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Service), nil
}

// EndpointSlices returns the EndpointSlices of a Service (label
// kubernetes.io/service-name).
func (l *ServiceLookup) EndpointSlices(ctx context.Context, namespace, service string) ([]*discoveryv1.EndpointSlice, error) {
	if l.slices == nil {
		return nil, nil
	}
	objs, err := l.slices.List(ctx, namespace, labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: service}))
	if err != nil {
		return nil, err
	}
	out := make([]*discoveryv1.EndpointSlice, len(objs))
	for i, obj := range objs {
		out[i] = obj.(*discoveryv1.EndpointSlice)
	}
	return out, nil
}
