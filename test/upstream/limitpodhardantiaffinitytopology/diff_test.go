package limitpodhardantiaffinitytopology

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/antiaffinity"

	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/limitpodhardantiaffinitytopology"
)

func toInternal(t testing.TB, obj runtime.Object) runtime.Object {
	out, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func describe(err error) string {
	if err == nil {
		return "admitted"
	}
	var code int32
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		code = st.Status().Code
	}
	return fmt.Sprintf("%d %q", code, err.Error())
}

type request struct {
	name                  string
	op                    admission.Operation
	reqName               string
	resource, subresource string
	obj                   runtime.Object
}

func compare(t *testing.T, r request, outcomes map[string]int) {
	t.Helper()
	up, our := upstream.NewInterPodAntiAffinity(), ours.Plugin{}
	for _, op := range []admission.Operation{admission.Create, admission.Update, admission.Delete, admission.Connect} {
		if up.Handles(upadmission.Operation(op)) != our.Handles(op) {
			t.Fatalf("Handles(%s) differs", op)
		}
	}
	a := &admission.Attributes{Name: r.reqName, Namespace: "ns", Operation: r.op, Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource: schema.GroupVersionResource{Version: "v1", Resource: r.resource}, Subresource: r.subresource,
		Object: r.obj.DeepCopyObject(), Record: admission.NewRecord()}
	ua := upadmission.NewAttributesRecord(toInternal(t, r.obj), nil, a.Kind, a.Namespace, a.Name, a.Resource, a.Subresource,
		upadmission.Operation(a.Operation), nil, false, nil)
	g, w := describe(our.Validate(context.Background(), a)), describe(up.Validate(context.Background(), ua, nil))
	if g != w {
		t.Errorf("%s:\n admitd   = %s\n upstream = %s", r.name, g, w)
	}
	outcomes[w]++
}

var keys = []string{corev1.LabelHostname, "failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone", "", "example.com/rack"}

func term(key string) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"security": "S1"}}, TopologyKey: key}
}

func genPod(r *rand.Rand) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	switch r.IntN(5) {
	case 0:
		p.Name = ""
	case 1:
		p.Name, p.GenerateName = "", "gen-"
	}
	if r.IntN(6) == 0 {
		return p
	}
	aff := &corev1.Affinity{}
	terms := func() []corev1.PodAffinityTerm {
		var out []corev1.PodAffinityTerm
		for range r.IntN(3) {
			out = append(out, term(keys[r.IntN(len(keys))]))
		}
		return out
	}
	if r.IntN(3) > 0 {
		aff.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms()}
		for _, tm := range terms() {
			aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, corev1.WeightedPodAffinityTerm{Weight: 5, PodAffinityTerm: tm})
		}
	}
	if r.IntN(2) == 0 {
		aff.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms()}
	}
	p.Spec.Affinity = aff
	return p
}

func TestSameDecisions(t *testing.T) {
	outcomes := map[string]int{}
	rnd := rand.New(rand.NewPCG(5, 37))
	const n = 2000
	for i := range n {
		obj := runtime.Object(genPod(rnd))
		r := request{name: fmt.Sprintf("generated %d", i), op: admission.Create, reqName: obj.(*corev1.Pod).Name, resource: "pods", obj: obj}
		switch k := rnd.IntN(12); {
		case k < 6:
		case k < 9:
			r.op = admission.Update
		case k < 10:
			r.subresource = "status"
		case k < 11:
			r.resource = "widgets"
		default:
			r.obj = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}}
		}
		if rnd.IntN(4) == 0 {
			r.reqName = "request-name" // upstream names the pod, not the request
		}
		compare(t, r, outcomes)
	}
	t.Logf("%d generated requests, %d distinct outcomes", n, len(outcomes))
	if len(outcomes) < 10 {
		t.Errorf("only %d distinct outcomes", len(outcomes))
	}
}
