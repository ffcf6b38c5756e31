package denyserviceexternalips

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	serviceapi "k8s.io/kubernetes/pkg/api/service"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/admitd/admitd/internal/registry"
)

// TestServiceWarnings compares the warnings admitd's Service strategy gives
// a create (the ones a client sees even when DenyServiceExternalIPs then
// refuses it) with upstream's GetWarningsForService, over generated
// Services.
func TestServiceWarnings(t *testing.T) {
	res, ok := registry.NewCatalogue().Lookup(corev1.SchemeGroupVersion.WithResource("services"))
	if !ok {
		t.Fatal("services not served")
	}
	r := rand.New(rand.NewSource(31))
	addrs := []string{"", "1.1.1.1", "192.0.2.010", "2001:db8::1", "2001:DB8::1", "::ffff:1.2.3.4", "None"}
	valid := addrs[1:6] // validation refuses the others before warnings are computed
	cidrs := []string{"10.0.0.0/8", "10.0.0.1/8", "010.0.0.0/8", "2001:db8::/32"}
	types := []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName}
	const n = 3000
	distinct := map[string]bool{}
	for i := 0; i < n; i++ {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}, Spec: corev1.ServiceSpec{
			Type: pick(r, types), ClusterIP: pick(r, addrs), LoadBalancerIP: pick(r, addrs[:6]),
			SessionAffinity: pick(r, []corev1.ServiceAffinity{corev1.ServiceAffinityNone, corev1.ServiceAffinityClientIP}),
			ExternalName:    pick(r, []string{"", "", "example.com"})}}
		if svc.Spec.ClusterIP != "" {
			svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
			if r.Intn(3) == 0 {
				svc.Spec.ClusterIPs = append(svc.Spec.ClusterIPs, pick(r, valid))
			}
		}
		for j := r.Intn(3); j > 0; j-- {
			svc.Spec.ExternalIPs = append(svc.Spec.ExternalIPs, pick(r, valid))
		}
		for j := r.Intn(3); j > 0; j-- {
			svc.Spec.LoadBalancerSourceRanges = append(svc.Spec.LoadBalancerSourceRanges, pick(r, cidrs))
		}
		if r.Intn(5) == 0 {
			svc.Annotations = map[string]string{corev1.DeprecatedAnnotationTopologyAwareHints: "auto"}
		}
		if r.Intn(4) == 0 {
			svc.Spec.TrafficDistribution = ptr(pick(r, []string{corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone}))
		}
		internal := &api.Service{}
		if err := legacyscheme.Scheme.Convert(svc, internal, nil); err != nil {
			t.Fatal(err)
		}
		want := serviceapi.GetWarningsForService(internal, nil)
		got := res.Warnings(svc, nil)
		if !slices.Equal(got, want) {
			t.Errorf("service %d %+v: warnings\n %q, upstream\n %q", i, svc.Spec, got, want)
		}
		distinct[fmt.Sprintf("%q", want)] = true
	}
	t.Logf("%d services compared, %d distinct warning lists", n, len(distinct))
	if len(distinct) < 50 {
		t.Errorf("%d distinct warning lists, want at least 50: the generator no longer reaches the warnings", len(distinct))
	}
}

func ptr[T any](v T) *T { return &v }
