package registry

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
)

// EndpointSlice preparation, as upstream's strategy for writes through
// discovery.k8s.io/v1 (the only version served): deprecatedTopology is
// dropped, a v1 client may not write it. (The generation starts at 1 on
// create, the descriptor's generation rule.)

func prepareEndpointSliceForCreate(obj runtime.Object) {
	dropEndpointTopology(obj.(*discoveryv1.EndpointSlice), nil)
}

// prepareEndpointSliceForUpdate grows the generation when anything but
// metadata changed, or the labels did (the EndpointSlice controllers'
// trackers compare generations to notice slices changed by others), as
// the object was sent: before the topology is dropped.
func prepareEndpointSliceForUpdate(obj, old runtime.Object) {
	s, was := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
	if endpointSliceChanged(s, was) {
		s.Generation = was.Generation + 1
	}
	dropEndpointTopology(s, was)
}

func endpointSliceChanged(s, was *discoveryv1.EndpointSlice) bool {
	return s.AddressType != was.AddressType || !equality.Semantic.DeepEqual(s.Endpoints, was.Endpoints) ||
		!equality.Semantic.DeepEqual(s.Ports, was.Ports) || !equality.Semantic.DeepEqual(s.Labels, was.Labels)
}

// dropEndpointTopology clears every endpoint's deprecatedTopology unless
// the endpoints are unchanged. An endpoint without a nodeName whose
// topology names, under the hostname label, a node the old slice's
// topology named keeps it as its nodeName, so partial updates keep the
// node.
func dropEndpointTopology(s, old *discoveryv1.EndpointSlice) {
	if old != nil && equality.Semantic.DeepEqual(old.Endpoints, s.Endpoints) {
		return
	}
	known := topologyNodeNames(old)
	for i := range s.Endpoints {
		ep := &s.Endpoints[i]
		node, ok := ep.DeprecatedTopology[corev1.LabelHostname]
		if ep.NodeName == nil && ok && known[node] && len(apivalidation.NameIsDNSSubdomain(node, false)) == 0 {
			ep.NodeName = &node
		}
		ep.DeprecatedTopology = nil
	}
}

// topologyNodeNames are the non-empty node names of old's endpoints'
// topology (none when old is nil).
func topologyNodeNames(old *discoveryv1.EndpointSlice) map[string]bool {
	names := map[string]bool{}
	if old == nil {
		return names
	}
	for _, ep := range old.Endpoints {
		if node := ep.DeprecatedTopology[corev1.LabelHostname]; node != "" {
			names[node] = true
		}
	}
	return names
}
