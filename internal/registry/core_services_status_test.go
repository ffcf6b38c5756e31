package registry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// A services/status write is checked as upstream's
// ValidateServiceStatusUpdate: ingress points only on a LoadBalancer
// Service, legacy IPs strict unless already stored, IP modes, DNS
// hostnames; the stored spec is not checked again.
func TestServiceStatusValidation(t *testing.T) {
	svc := func(typ corev1.ServiceType, ingress ...corev1.LoadBalancerIngress) *corev1.Service {
		return &corev1.Service{ObjectMeta: meta1("s"), Spec: corev1.ServiceSpec{Type: typ},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: ingress}}}
	}
	vip := ptr.To(corev1.LoadBalancerIPModeVIP)
	lb := corev1.ServiceTypeLoadBalancer
	for _, tc := range []struct {
		name     string
		obj, old *corev1.Service
		want     string
	}{
		{"ingress on a ClusterIP service", svc(corev1.ServiceTypeClusterIP, corev1.LoadBalancerIngress{IP: "1.2.3.4", IPMode: vip}), svc(corev1.ServiceTypeClusterIP),
			"status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"},
		{"valid ingress, spec not checked again", svc(lb, corev1.LoadBalancerIngress{IP: "1.2.3.4", IPMode: vip}, corev1.LoadBalancerIngress{Hostname: "lb.example.com"}), svc(lb), ""},
		{"leading zeros", svc(lb, corev1.LoadBalancerIngress{IP: "01.2.3.4", IPMode: vip}), svc(lb),
			`status.loadBalancer.ingress[0].ip: Invalid value: "01.2.3.4": must not have leading 0s`},
		{"leading zeros already stored", svc(lb, corev1.LoadBalancerIngress{IP: "01.2.3.4", IPMode: vip}), svc(lb, corev1.LoadBalancerIngress{IP: "01.2.3.4", IPMode: vip}), ""},
		{"no IP mode", svc(lb, corev1.LoadBalancerIngress{IP: "1.2.3.4"}), svc(lb),
			"status.loadBalancer.ingress[0].ipMode: Required value: must be specified when `ip` is set"},
		{"IP mode without IP", svc(lb, corev1.LoadBalancerIngress{Hostname: "a.example", IPMode: vip}), svc(lb),
			"status.loadBalancer.ingress[0].ipMode: Forbidden: may not be specified when `ip` is not set"},
		{"unknown IP mode", svc(lb, corev1.LoadBalancerIngress{IP: "1.2.3.4", IPMode: ptr.To(corev1.LoadBalancerIPMode("Bogus"))}), svc(lb),
			`status.loadBalancer.ingress[0].ipMode: Unsupported value: "Bogus": supported values: "Proxy", "VIP"`},
		{"hostname an IP", svc(lb, corev1.LoadBalancerIngress{Hostname: "1.2.3.4"}), svc(lb),
			`status.loadBalancer.ingress[0].hostname: Invalid value: "1.2.3.4": must be a DNS name, not an IP address`},
		{"hostname not DNS", svc(lb, corev1.LoadBalancerIngress{Hostname: "Bad_Host"}), svc(lb),
			`status.loadBalancer.ingress[0].hostname: Invalid value: "Bad_Host": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
	} {
		r := resourceFor(t, tc.obj)
		if got := aggregate(r.ValidateSubresourceChange("status", tc.obj, tc.old)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
