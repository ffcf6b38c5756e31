package registry

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestServiceWarnings(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec corev1.ServiceSpec
		want []string
	}{
		{"plain", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.1", ClusterIPs: []string{"10.0.0.1"}}, nil},
		{"external IPs", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ExternalIPs: []string{"192.0.2.10"}},
			[]string{"spec.externalIPs is deprecated and may no longer be implemented in some clusters"}},
		{"headless with external IPs", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "None",
			SessionAffinity: corev1.ServiceAffinityNone, ExternalIPs: []string{"192.0.2.10"}},
			[]string{"spec.externalIPs is ignored for headless services"}},
		{"external name with a leading-zero IP", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "x.example",
			ExternalIPs: []string{"192.0.2.010"}},
			[]string{`spec.externalIPs[0]: non-standard IP address "192.0.2.010" is invalid: use "192.0.2.10"`,
				`spec.externalIPs is ignored when spec.type is "ExternalName"`}},
	} {
		got := serviceWarnings(&corev1.Service{Spec: tc.spec}, nil)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: serviceWarnings = %q, want %q", tc.name, got, tc.want)
		}
	}
}
