package defaultingressclass

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/network/defaultingressclass"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/defaultingressclass"
	"github.com/admitd/admitd/test/upstream/internal/plugindiff"
)

// cache is admitd's object cache over the classes upstream's lister holds.
type cache []*networkingv1.IngressClass

func (c cache) GetCachedObject(context.Context, schema.GroupVersionResource, string, string) (runtime.Object, error) {
	return nil, fmt.Errorf("unexpected get")
}

func (c cache) ListCachedObjects(_ context.Context, gvr schema.GroupVersionResource, _ string, _ labels.Selector) ([]runtime.Object, error) {
	if gvr != networkingv1.SchemeGroupVersion.WithResource("ingressclasses") {
		return nil, fmt.Errorf("unexpected list of %v", gvr)
	}
	out := make([]runtime.Object, len(c))
	for i, ic := range c {
		out[i] = ic
	}
	return out, nil
}

func compareOver(t testing.TB, classes []*networkingv1.IngressClass) func(*admission.Attributes) (plugindiff.Result, []string) {
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	idx := f.Networking().V1().IngressClasses().Informer().GetIndexer()
	for _, c := range classes {
		if err := idx.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	up, err := plugindiff.Upstream(upstream.Register, ours.Name, f)
	if err != nil {
		t.Fatal(err)
	}
	p := ours.New(cache(classes))
	return func(a *admission.Attributes) (plugindiff.Result, []string) { return plugindiff.Compare(p, up, a) }
}

var t0 = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)

const isDefault = "ingressclass.kubernetes.io/is-default-class"

func class(name string, created time.Time, annotations map[string]string) *networkingv1.IngressClass {
	return &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created), Annotations: annotations},
		Spec: networkingv1.IngressClassSpec{Controller: "example.com/" + name}}
}

func ingress(name, generateName string, field, annotation *string) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: generateName, Namespace: "testing"},
		Spec: networkingv1.IngressSpec{IngressClassName: field, DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "s", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}
	if annotation != nil {
		ing.Annotations = map[string]string{"kubernetes.io/ingress.class": *annotation}
	}
	return ing
}

func ptr[T any](v T) *T { return &v }

// TestUpstreamTable is upstream's TestAdmission, each case through both.
func TestUpstreamTable(t *testing.T) {
	def := map[string]string{isDefault: "true"}
	default1, default2 := class("default1", time.Time{}, def), class("default2", time.Time{}, def)
	falseDef := class("nondefault1", time.Time{}, map[string]string{isDefault: "false"})
	noDef := class("nondefault2", time.Time{}, nil)
	emptyDef := class("nondefault2", time.Time{}, map[string]string{isDefault: ""})
	created1 := class("default1", time.Date(2022, 1, 1, 0, 0, 0, 1, time.UTC), def)
	created2 := class("default2", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), def)
	for _, tc := range []struct {
		name              string
		classes           []*networkingv1.IngressClass
		field, annotation *string
		want              *string
	}{
		{"no default, no modification of Ingress", []*networkingv1.IngressClass{falseDef, noDef}, nil, nil, nil},
		{"one default, modify Ingress with class=nil", []*networkingv1.IngressClass{default1, falseDef, noDef}, nil, nil, ptr("default1")},
		{"one default, no modification of Ingress with class field=''", []*networkingv1.IngressClass{default1, falseDef, noDef}, ptr(""), nil, ptr("")},
		{"one default, no modification of Ingress with class field='foo'", []*networkingv1.IngressClass{default1, falseDef, noDef}, ptr("foo"), nil, ptr("foo")},
		{"one default, no modification of Ingress with class annotation='foo'", []*networkingv1.IngressClass{default1, falseDef, noDef}, nil, ptr("foo"), nil},
		{"two defaults with the same creation time, choose the one with the lower name", []*networkingv1.IngressClass{default1, default2, falseDef, noDef, emptyDef}, nil, nil, ptr("default1")},
		{"two defaults, no modification with Ingress with class field=''", []*networkingv1.IngressClass{default1, default2, falseDef, noDef}, ptr(""), nil, ptr("")},
		{"two defaults, choose the one with the newer creation time", []*networkingv1.IngressClass{created1, created2, falseDef, noDef}, nil, nil, ptr("default1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			compare := compareOver(t, tc.classes)
			u, diffs := compare(admissiontest.Create(ingress("testing", "", tc.field, tc.annotation)).Attributes())
			for _, d := range diffs {
				t.Error(d)
			}
			got := u.Object.(*networkingv1.Ingress).Spec.IngressClassName
			if u.Err != nil || fmt.Sprint(deref(got)) != fmt.Sprint(deref(tc.want)) {
				t.Errorf("upstream: class %v, error %v; want class %v", deref(got), u.Err, deref(tc.want))
			}
		})
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

var (
	classNames  = []string{"a", "b", "c", "d", "nginx"}
	times       = []time.Time{{}, t0, t0.Add(time.Nanosecond), t0.Add(time.Second), t0.Add(time.Hour)}
	annotations = []map[string]string{
		nil,
		{isDefault: "true"},
		{isDefault: "false"},
		{isDefault: ""},
		{isDefault: "TRUE"},
		{"ingressclass.beta.kubernetes.io/is-default-class": "true"},
		{"storageclass.kubernetes.io/is-default-class": "true"},
	}
	fields      = []*string{nil, nil, nil, ptr(""), ptr("nginx"), ptr("missing")}
	annotationV = []*string{nil, nil, nil, ptr(""), ptr("nginx")}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.Intn(len(xs))] }

// TestGenerated compares random class sets and Ingresses.
func TestGenerated(t *testing.T) {
	r := rand.New(rand.NewSource(29))
	const worlds, perWorld = 300, 8
	ingresses := networkingv1.SchemeGroupVersion.WithResource("ingresses")
	outcomes := map[string]int{}
	for w := 0; w < worlds; w++ {
		var classes []*networkingv1.IngressClass
		for _, i := range r.Perm(len(classNames))[:r.Intn(len(classNames)+1)] {
			classes = append(classes, class(classNames[i], pick(r, times), pick(r, annotations)))
		}
		compare := compareOver(t, classes)
		for c := 0; c < perWorld; c++ {
			name, gen := "i", ""
			if r.Intn(4) == 0 {
				name, gen = "", "i-"
			}
			ing := ingress(name, gen, pick(r, fields), pick(r, annotationV))
			b := admissiontest.Create(ing)
			switch r.Intn(10) {
			case 0:
				b = admissiontest.Update(ing, ingress(name, gen, nil, nil))
			case 1:
				b = b.Resource(ingresses, "status")
			case 2:
				b = admissiontest.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: gen, Namespace: "testing"}}).Resource(ingresses, "")
			}
			u, diffs := compare(b.Attributes())
			for _, d := range diffs {
				t.Errorf("world %d ingress %d: %s", w, c, d)
			}
			key := u.Describe()
			if ing, ok := u.Object.(*networkingv1.Ingress); ok && ing.Spec.IngressClassName != nil {
				key += " class=" + *ing.Spec.IngressClassName
			}
			outcomes[key]++
		}
	}
	t.Logf("%d requests compared, outcomes: %v", worlds*perWorld, outcomes)
	if len(outcomes) < 7 {
		t.Errorf("%d distinct outcomes, want at least 7: the generator no longer reaches the plugin", len(outcomes))
	}
}
