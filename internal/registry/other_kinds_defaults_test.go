package registry

// Expected values follow upstream pkg/apis/{scheduling,storage,networking,discovery}/v1/defaults.go.

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestDefaultOtherKinds(t *testing.T) {
	tcp := ptr.To(corev1.ProtocolTCP)
	for _, tc := range []struct {
		name    string
		in, out runtime.Object
	}{{
		name: "PriorityClass.scheduling.k8s.io",
		in:   &schedulingv1.PriorityClass{Value: 42},
		out:  &schedulingv1.PriorityClass{Value: 42, PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority)},
	}, {
		name: "PriorityClass.scheduling.k8s.io/kept",
		in:   &schedulingv1.PriorityClass{PreemptionPolicy: ptr.To(corev1.PreemptNever)},
		out:  &schedulingv1.PriorityClass{PreemptionPolicy: ptr.To(corev1.PreemptNever)},
	}, {
		name: "StorageClass.storage.k8s.io",
		in:   &storagev1.StorageClass{Provisioner: "p"},
		out: &storagev1.StorageClass{Provisioner: "p", ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimDelete),
			VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate)},
	}, {
		name: "NetworkPolicy.networking.k8s.io",
		in: &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{
			Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{}}}},
			Egress:  []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{}}}}}},
		out: &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: tcp}}}},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: tcp}}}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}}},
	}, {
		name: "IngressClass.networking.k8s.io",
		in:   &networkingv1.IngressClass{Spec: networkingv1.IngressClassSpec{Parameters: &networkingv1.IngressClassParametersReference{Kind: "K", Name: "n"}}},
		out: &networkingv1.IngressClass{Spec: networkingv1.IngressClassSpec{Parameters: &networkingv1.IngressClassParametersReference{Kind: "K", Name: "n",
			Scope: ptr.To(networkingv1.IngressClassParametersReferenceScopeCluster)}}},
	}, {
		name: "EndpointSlice.discovery.k8s.io",
		in:   &discoveryv1.EndpointSlice{Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}}},
		out:  &discoveryv1.EndpointSlice{Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](80), Name: ptr.To(""), Protocol: tcp}}},
	}} {
		kind, _, _ := strings.Cut(tc.name, "/")
		t.Run(tc.name, func(t *testing.T) { checkDefault(t, kind, tc.in, tc.out) })
	}
}
