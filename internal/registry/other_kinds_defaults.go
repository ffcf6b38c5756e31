package registry

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Decoding defaults of the small kinds of otherKinds (upstream
// pkg/apis/{scheduling,storage,networking,discovery}/v1/defaults.go).

// defaultPriorityClass: a PriorityClass preempts lower priorities unless told otherwise.
func defaultPriorityClass(obj runtime.Object) {
	pc := obj.(*schedulingv1.PriorityClass)
	if pc.PreemptionPolicy == nil {
		pc.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
	}
}

// defaultStorageClass: volumes are deleted and bound immediately by default.
func defaultStorageClass(obj runtime.Object) {
	sc := obj.(*storagev1.StorageClass)
	if sc.ReclaimPolicy == nil {
		sc.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimDelete)
	}
	if sc.VolumeBindingMode == nil {
		sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
	}
}

// defaultNetworkPolicy: policyTypes implies Ingress (and Egress when egress
// rules exist); ports are TCP unless told otherwise.
func defaultNetworkPolicy(obj runtime.Object) {
	spec := &obj.(*networkingv1.NetworkPolicy).Spec
	if len(spec.PolicyTypes) == 0 {
		spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(spec.Egress) != 0 {
			spec.PolicyTypes = append(spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
	for i := range spec.Ingress {
		defaultNetworkPolicyPorts(spec.Ingress[i].Ports)
	}
	for i := range spec.Egress {
		defaultNetworkPolicyPorts(spec.Egress[i].Ports)
	}
}

func defaultNetworkPolicyPorts(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			ports[i].Protocol = ptr.To(corev1.ProtocolTCP)
		}
	}
}

// defaultIngressClass: parameters are cluster-scoped unless told otherwise.
func defaultIngressClass(obj runtime.Object) {
	if p := obj.(*networkingv1.IngressClass).Spec.Parameters; p != nil && p.Scope == nil {
		p.Scope = ptr.To(networkingv1.IngressClassParametersReferenceScopeCluster)
	}
}

// defaultEndpointSlice: each port gets an empty name and TCP.
func defaultEndpointSlice(obj runtime.Object) {
	es := obj.(*discoveryv1.EndpointSlice)
	for i := range es.Ports {
		p := &es.Ports[i]
		if p.Name == nil {
			p.Name = ptr.To("")
		}
		if p.Protocol == nil {
			p.Protocol = ptr.To(corev1.ProtocolTCP)
		}
	}
}
