package quota

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

var servicesResource = schema.GroupResource{Resource: "services"}

var serviceNames = []corev1.ResourceName{
	ObjectCountName(servicesResource),
	corev1.ResourceServices,
	corev1.ResourceServicesNodePorts,
	corev1.ResourceServicesLoadBalancers,
}

type services struct{}

// NewServices returns the service evaluator: services, node ports and load
// balancers. It has no scopes and no constraints.
func NewServices() Evaluator { return services{} }

func (services) GroupResource() schema.GroupResource { return servicesResource }

// Handles creates and updates of services (a type change may change the
// usage), not of their subresources.
func (services) Handles(a *admission.Attributes) bool {
	return a.Subresource == "" && (a.Operation == admission.Create || a.Operation == admission.Update)
}

func (s services) Matches(q *corev1.ResourceQuota, obj runtime.Object) (bool, error) {
	return matches(q, obj, func(n corev1.ResourceName) bool { return containsName(serviceNames, n) }, noScopes)
}

func (services) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return intersect(input, serviceNames)
}

func (services) MatchingScopes(runtime.Object, []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

func (services) UncoveredScopes(_, _ []corev1.ScopedResourceSelectorRequirement) []corev1.ScopedResourceSelectorRequirement {
	return []corev1.ScopedResourceSelectorRequirement{}
}

func (services) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

// Usage always names all four resources: one service, and for NodePort and
// LoadBalancer services their node ports (only the ports with a node port
// when a load balancer allocates none), and one load balancer.
func (services) Usage(obj runtime.Object) (corev1.ResourceList, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return corev1.ResourceList{}, fmt.Errorf("expect *api.Service or *v1.Service, got %v", obj)
	}
	out := corev1.ResourceList{
		ObjectCountName(servicesResource):    one(),
		corev1.ResourceServices:              one(),
		corev1.ResourceServicesLoadBalancers: zero(),
		corev1.ResourceServicesNodePorts:     zero(),
	}
	ports := int64(len(svc.Spec.Ports))
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		if a := svc.Spec.AllocateLoadBalancerNodePorts; a != nil && !*a {
			ports = 0
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					ports++
				}
			}
		}
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
		out[corev1.ResourceServicesLoadBalancers] = one()
	}
	return out, nil
}
