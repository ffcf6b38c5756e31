package denyserviceexternalips

import (
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/network/denyserviceexternalips"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/denyserviceexternalips"
	"github.com/admitd/admitd/test/upstream/internal/plugindiff"
)

func plugins(t testing.TB) (admission.Handler, upadmission.Interface) {
	up, err := plugindiff.Upstream(upstream.Register, ours.Name, informers.NewSharedInformerFactory(fake.NewClientset(), 0))
	if err != nil {
		t.Fatal(err)
	}
	return ours.New(), up
}

func svc(name, generateName string, ips ...string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: generateName, Namespace: "default"},
		Spec: corev1.ServiceSpec{ExternalIPs: ips, Type: corev1.ServiceTypeClusterIP,
			Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
}

// TestUpstreamTable is upstream's TestAdmission, each case through both.
func TestUpstreamTable(t *testing.T) {
	p, up := plugins(t)
	for _, tc := range []struct {
		name     string
		obj, old *corev1.Service
		deny     bool
	}{
		{"create: without externalIPs", svc("s", ""), nil, false},
		{"create: with externalIPs", svc("s", "", "1.1.1.1"), nil, true},
		{"update: same externalIPs", svc("s", "", "1.1.1.1", "2.2.2.2"), svc("s", "", "1.1.1.1", "2.2.2.2"), false},
		{"update: reorder externalIPs", svc("s", "", "1.1.1.1", "2.2.2.2"), svc("s", "", "2.2.2.2", "1.1.1.1"), false},
		{"update: change externalIPs", svc("s", "", "1.1.1.1", "2.2.2.2"), svc("s", "", "1.1.1.1", "3.3.3.3"), true},
		{"update: add externalIPs", svc("s", "", "1.1.1.1", "2.2.2.2"), svc("s", "", "1.1.1.1"), true},
		{"update: erase externalIPs", svc("s", ""), svc("s", "", "1.1.1.1", "2.2.2.2"), false},
		{"update: reduce externalIPs from back", svc("s", "", "1.1.1.1"), svc("s", "", "1.1.1.1", "2.2.2.2"), false},
		{"update: reduce externalIPs from front", svc("s", "", "2.2.2.2"), svc("s", "", "1.1.1.1", "2.2.2.2"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := admissiontest.Create(tc.obj)
			if tc.old != nil {
				b = admissiontest.Update(tc.obj, tc.old)
			}
			u, diffs := plugindiff.Compare(p, up, b.Attributes())
			for _, d := range diffs {
				t.Error(d)
			}
			if (u.Err != nil) != tc.deny {
				t.Errorf("upstream: %v, want denied %v", u.Err, tc.deny)
			}
		})
	}
}

var ips = []string{"1.1.1.1", "2.2.2.2", "192.0.2.10", "2001:db8::1", "2001:db8:0::1", ""}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.Intn(len(xs))] }

func someIPs(r *rand.Rand) []string {
	var out []string
	for i := r.Intn(4); i > 0; i-- {
		out = append(out, pick(r, ips))
	}
	return out
}

// TestGenerated compares random creates, updates and deletes of Services.
func TestGenerated(t *testing.T) {
	p, up := plugins(t)
	r := rand.New(rand.NewSource(30))
	services := corev1.SchemeGroupVersion.WithResource("services")
	const n = 3000
	outcomes := map[string]int{}
	for i := 0; i < n; i++ {
		name, gen := "s", ""
		if r.Intn(5) == 0 {
			name, gen = "", "s-"
		}
		obj, old := svc(name, gen, someIPs(r)...), svc(name, gen, someIPs(r)...)
		var b *admissiontest.Builder
		switch r.Intn(14) {
		case 0:
			b = admissiontest.Update(obj, old).Resource(services, "status")
		case 1:
			b = admissiontest.Delete(old)
		case 2:
			b = admissiontest.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}).Resource(services, "")
		case 3:
			b = admissiontest.Update(obj, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}).Resource(services, "")
		case 4, 5, 6, 7:
			b = admissiontest.Create(obj)
		default:
			b = admissiontest.Update(obj, old)
		}
		u, diffs := plugindiff.Compare(p, up, b.Attributes())
		for _, d := range diffs {
			t.Errorf("request %d: %s", i, d)
		}
		outcomes[u.Describe()]++
	}
	t.Logf("%d requests compared, outcomes: %v", n, outcomes)
	if len(outcomes) < 5 {
		t.Errorf("%d distinct outcomes, want at least 5: the generator no longer reaches the plugin", len(outcomes))
	}
}
