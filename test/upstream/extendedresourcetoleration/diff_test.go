// Package extendedresourcetoleration compares admitd's
// ExtendedResourceToleration with upstream's plugin over upstream's test
// table and generated pods.
package extendedresourcetoleration

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	upadmission "k8s.io/apiserver/pkg/admission"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/extendedresourcetoleration"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/extendedresourcetoleration"
	"github.com/admitd/admitd/test/upstream/internal/tolgen"
)

func newUpstream(t *testing.T) upadmission.MutationInterface {
	p, err := tolgen.NewWorld().InitUpstream(t, upstream.Register, upstream.PluginName, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p.(upadmission.MutationInterface)
}

func compare(t *testing.T, name string, up upadmission.MutationInterface, a *admission.Attributes) {
	t.Helper()
	if got, want := (ours.Plugin{}).Handles(a.Operation), up.Handles(upadmission.Operation(a.Operation)); got != want {
		t.Fatalf("%s: Handles(%s) = %v, upstream %v", name, a.Operation, got, want)
	}
	if !up.Handles(upadmission.Operation(a.Operation)) {
		return
	}
	ua := tolgen.Upstream(t, a)
	upErr := up.Admit(context.Background(), ua, nil)
	ourErr := (ours.Plugin{}).Admit(context.Background(), a)
	tolgen.Same(t, name, ourErr, upErr, tolgen.RoundTrip(t, a.Object), tolgen.ToV1(t, ua.GetObject(), corev1.SchemeGroupVersion))
}

func requesting(name string) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceName(name): resource.MustParse("1")}}}
}

func pod(containers, init []corev1.Container, ts ...corev1.Toleration) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "name", Namespace: "foo"}, Spec: corev1.PodSpec{Containers: containers, InitContainers: init, Tolerations: ts}}
}

// Upstream's table (TestAdmit), rewritten as inputs.
func TestUpstreamTable(t *testing.T) {
	up := newUpstream(t)
	cpu, mem := requesting("cpu"), requesting("memory")
	r1, r2 := requesting("example.com/device-ek"), requesting("example.com/device-do")
	exists := func(key string) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	}
	for name, p := range map[string]*corev1.Pod{
		"empty pod":                         pod(nil, nil),
		"containers without extended":       pod([]corev1.Container{cpu, mem}, nil),
		"init containers without extended":  pod(nil, []corev1.Container{cpu, mem}),
		"container with extended":           pod([]corev1.Container{cpu, mem, r1}, nil),
		"init container with extended":      pod(nil, []corev1.Container{cpu, mem, r1}),
		"existing tolerations and extended": pod([]corev1.Container{cpu, r1}, nil, corev1.Toleration{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoSchedule}),
		"multiple extended":                 pod([]corev1.Container{cpu, r1, r2}, []corev1.Container{r1}),
		"existing correct toleration":       pod([]corev1.Container{cpu, mem, r1}, nil, exists("example.com/device-ek")),
		"same key, other effect and value": pod([]corev1.Container{cpu, mem, r1}, nil,
			corev1.Toleration{Key: "example.com/device-ek", Operator: corev1.TolerationOpEqual, Value: "foo", Effect: corev1.TaintEffectNoExecute}),
		"wildcard toleration": pod([]corev1.Container{cpu, mem, r1}, nil, corev1.Toleration{Operator: corev1.TolerationOpExists}),
	} {
		compare(t, name, up, admissiontest.Create(p).Attributes())
		compare(t, name+" (update)", up, admissiontest.Update(p.DeepCopy(), pod(nil, nil)).Attributes())
	}
}

func TestGenerated(t *testing.T) {
	up := newUpstream(t)
	r := rand.New(rand.NewSource(3))
	const n = 2000
	for i := range n {
		p := tolgen.Pod(r, "ns")
		// Tolerations for the generated extended resources, now and then.
		if r.Intn(2) == 0 {
			for range r.Intn(3) {
				tt := tolgen.Toleration(r)
				tt.Key = []string{"example.com/gpu", "foo.io/dev", "a/b"}[r.Intn(3)]
				p.Spec.Tolerations = append(p.Spec.Tolerations, tt)
			}
		}
		compare(t, fmt.Sprintf("pod %d %v", i, p.Spec), up, admissiontest.Create(p).Attributes())
	}
	t.Logf("%d generated pods", n)
}
