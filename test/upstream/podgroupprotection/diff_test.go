// Package podgroupprotection compares pkg/admission/plugins/podgroupprotection
// with upstream's plugin/pkg/admission/scheduling/podgroupprotection: the
// mutated PodGroup (v1alpha3 and v1beta1) over upstream's test table and
// generated requests, with the GenericWorkload gate on and off.
package podgroupprotection

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/scheduling/podgroupprotection"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/podgroupprotection"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

type features updiff.Gates

func (g features) Initialize(p upadmission.Interface) {
	if w, ok := p.(initializer.WantsFeatures); ok {
		w.InspectFeatureGates(updiff.Gates(g).FeatureGate())
	}
}

type pair struct {
	up   upadmission.MutationInterface
	ours *ours.Plugin
}

func newPair(t *testing.T, enabled bool) pair {
	ps := upadmission.NewPlugins()
	upstream.Register(ps)
	up, err := ps.InitPlugin(upstream.PluginName, nil, features{kubefeatures.GenericWorkload: enabled})
	if err != nil {
		t.Fatal(err)
	}
	return pair{up: up.(upadmission.MutationInterface), ours: ours.New(enabled)}
}

func (p pair) compare(t *testing.T, name string, a *admission.Attributes) {
	t.Helper()
	ua := updiff.Attributes(t, a)
	var upErr, ourErr error
	if p.up.Handles(ua.GetOperation()) {
		upErr = p.up.Admit(context.Background(), ua, nil)
	}
	if p.ours.Handles(a.Operation) {
		ourErr = p.ours.Admit(context.Background(), a)
	}
	if u, o := updiff.OutcomeOf(upErr), updiff.OutcomeOf(ourErr); u != o {
		t.Errorf("%s: upstream %v, admitd %v", name, u, o)
	}
	if a.Object == nil {
		return
	}
	got := a.Object.DeepCopyObject()
	want := got.DeepCopyObject()
	updiff.ToVersion(t, ua.GetObject(), want)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s: object (-upstream +admitd):\n%s", name, d)
	}
}

func request(op admission.Operation, obj runtime.Object, version, resource, sub string) *admission.Attributes {
	var b *admissiontest.Builder
	switch op {
	case admission.Update:
		b = admissiontest.Update(obj, obj.DeepCopyObject())
	case admission.Delete:
		b = admissiontest.Delete(obj)
	default:
		b = admissiontest.Create(obj)
	}
	return b.Resource(schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: version, Resource: resource}, sub).Attributes()
}

func group(version string, finalizers []string) runtime.Object {
	meta := metav1.ObjectMeta{Namespace: "ns", Name: "g", Finalizers: finalizers}
	if version == "v1alpha3" {
		return &schedulingv1alpha3.PodGroup{TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1alpha3", Kind: "PodGroup"}, ObjectMeta: meta}
	}
	return &schedulingv1beta1.PodGroup{TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1beta1", Kind: "PodGroup"}, ObjectMeta: meta}
}

// TestUpstreamTable is upstream's TestAdmit.
func TestUpstreamTable(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		p := newPair(t, enabled)
		for _, v := range []string{"v1alpha3", "v1beta1"} {
			p.compare(t, "adds finalizer "+v, request(admission.Create, group(v, nil), v, "podgroups", ""))
			p.compare(t, "already present "+v, request(admission.Create, group(v, []string{ours.Finalizer}), v, "podgroups", ""))
			p.compare(t, "other finalizers "+v, request(admission.Create, group(v, []string{"a", "b"}), v, "podgroups", ""))
			p.compare(t, "status "+v, request(admission.Create, group(v, nil), v, "podgroups", "status"))
		}
		pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
		p.compare(t, "pod", admissiontest.Create(pod).Attributes())
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	n := 0
	for _, enabled := range []bool{true, false} {
		p := newPair(t, enabled)
		for i := 0; i < 500; i++ {
			v := pick("v1alpha3", "v1beta1")
			var fin []string
			for j := 0; j < rng.Intn(3); j++ {
				fin = append(fin, pick("a", ours.Finalizer, "kubernetes", "scheduling.k8s.io/other"))
			}
			op := admission.Operation(pick("CREATE", "CREATE", "UPDATE", "DELETE"))
			p.compare(t, fmt.Sprintf("generated %d (gate %v)", i, enabled),
				request(op, group(v, fin), v, pick("podgroups", "podgroups", "workloads"), pick("", "", "status")))
			n++
		}
	}
	t.Logf("%d requests compared", n)
}
