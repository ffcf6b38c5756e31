package printers

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

// TestServiceCIDRTable mirrors upstream's printServiceCIDR: the CIDRs
// joined by commas.
func TestServiceCIDRTable(t *testing.T) {
	res := lookup(t, "networking.k8s.io", "v1", "servicecidrs")
	checkKind(t, res, []string{"Name", "CIDRs", "Age"}, []cellCase{
		{name: "single", obj: &networkingv1.ServiceCIDR{ObjectMeta: clusterMeta("kubernetes"), Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/24"}}},
			cells: []any{"kubernetes", "10.0.0.0/24", "5m"}},
		{name: "dual", obj: &networkingv1.ServiceCIDR{ObjectMeta: clusterMeta("extra"), Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/28", "fd00::/112"}}},
			cells: []any{"extra", "10.96.0.0/28,fd00::/112", "5m"}},
	})
}

// TestIPAddressTable mirrors upstream's printIPAddress (as kube-apiserver
// 1.37.2 printed it: services/default/kubernetes, services/foo without a
// namespace): two columns, and the row's third cell, the age.
func TestIPAddressTable(t *testing.T) {
	res := lookup(t, "networking.k8s.io", "v1", "ipaddresses")
	ref := func(group, resource, namespace, name string) *networkingv1.ParentReference {
		return &networkingv1.ParentReference{Group: group, Resource: resource, Namespace: namespace, Name: name}
	}
	checkKind(t, res, []string{"Name", "ParentRef"}, []cellCase{
		{name: "service", obj: &networkingv1.IPAddress{ObjectMeta: clusterMeta("10.0.0.1"), Spec: networkingv1.IPAddressSpec{ParentRef: ref("", "services", "default", "kubernetes")}},
			cells: []any{"10.0.0.1", "services/default/kubernetes", "5m"}},
		{name: "cluster-scoped", obj: &networkingv1.IPAddress{ObjectMeta: clusterMeta("10.0.0.5"), Spec: networkingv1.IPAddressSpec{ParentRef: ref("", "services", "", "foo")}},
			cells: []any{"10.0.0.5", "services/foo", "5m"}},
		{name: "group", obj: &networkingv1.IPAddress{ObjectMeta: clusterMeta("fd00::1"), Spec: networkingv1.IPAddressSpec{ParentRef: ref("Gateway.Example.com", "Gateways", "ns", "gw")}},
			cells: []any{"fd00::1", "gateways.gateway.example.com/ns/gw", "5m"}},
		{name: "no parent", obj: &networkingv1.IPAddress{ObjectMeta: clusterMeta("10.0.0.9")},
			cells: []any{"10.0.0.9", "<none>", "5m"}},
	})
}
