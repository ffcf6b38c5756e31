package watchcache

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// ServiceLister is client-go's ServiceLister over a cache of Services, for
// the helpers of k8s.io/endpointslice that take one (which services a pod
// change concerns). It lists one namespace at a time: List of every
// namespace is refused.
type ServiceLister struct{ Cache *Cache[*corev1.Service] }

var _ corelisters.ServiceLister = ServiceLister{}

// List is not supported: the cache is read a namespace at a time.
func (l ServiceLister) List(labels.Selector) ([]*corev1.Service, error) {
	return nil, fmt.Errorf("listing the Services of every namespace is not supported")
}

// Services lists and gets the Services of namespace.
func (l ServiceLister) Services(namespace string) corelisters.ServiceNamespaceLister {
	return serviceNamespaceLister{cache: l.Cache, namespace: namespace}
}

type serviceNamespaceLister struct {
	cache     *Cache[*corev1.Service]
	namespace string
}

func (l serviceNamespaceLister) List(sel labels.Selector) ([]*corev1.Service, error) {
	return l.cache.List(l.namespace, func(s *corev1.Service) bool { return sel.Matches(labels.Set(s.Labels)) }), nil
}

func (l serviceNamespaceLister) Get(name string) (*corev1.Service, error) {
	s, ok := l.cache.Get(l.namespace, name)
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("service"), name)
	}
	return s, nil
}

// Namespaces lists the namespaces the cache has objects in.
func (c *Cache[T]) Namespaces() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.items))
	for ns := range c.items {
		out = append(out, ns)
	}
	return out
}
