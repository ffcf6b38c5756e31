package limitranger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	upadmission "k8s.io/apiserver/pkg/admission"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/limitranger"

	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/limitranger"
)

// ranges is admitd's ObjectCache over a list of LimitRanges, listed by name
// as the server's cache lists them.
type ranges []*corev1.LimitRange

func (r ranges) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (r ranges) ListCachedObjects(_ context.Context, _ schema.GroupVersionResource, namespace string, _ labels.Selector) ([]runtime.Object, error) {
	sorted := slices.Clone(r)
	slices.SortStableFunc(sorted, func(a, b *corev1.LimitRange) int { return strings.Compare(a.Name, b.Name) })
	var out []runtime.Object
	for _, lr := range sorted {
		if lr.Namespace == namespace {
			out = append(out, lr)
		}
	}
	return out, nil
}

// upstreamPlugin is upstream's LimitRanger over an informer that holds lrs.
func upstreamPlugin(t testing.TB, lrs ...*corev1.LimitRange) *upstream.LimitRanger {
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	idx := f.Core().V1().LimitRanges().Informer().GetIndexer()
	for _, lr := range lrs {
		if err := idx.Add(lr); err != nil {
			t.Fatal(err)
		}
	}
	p, err := upstream.NewLimitRanger(&upstream.DefaultLimitRangerActions{})
	if err != nil {
		t.Fatal(err)
	}
	p.SetExternalKubeInformerFactory(f)
	p.SetExternalKubeClientSet(client)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	return p
}

// request is one admission request of a differential case.
type request struct {
	name        string
	op          admission.Operation
	resource    string // pods or persistentvolumeclaims
	subresource string
	obj, old    runtime.Object
	ranges      []*corev1.LimitRange
	podLevel    bool // the PodLevelResources gate
}

func (r request) attributes() *admission.Attributes {
	kind := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	if r.resource == "persistentvolumeclaims" {
		kind.Kind = "PersistentVolumeClaim"
	}
	m := r.obj.(interface {
		GetName() string
		GetNamespace() string
	})
	return &admission.Attributes{Name: m.GetName(), Namespace: m.GetNamespace(), Operation: r.op, Kind: kind,
		Resource: schema.GroupVersionResource{Version: "v1", Resource: r.resource}, Subresource: r.subresource,
		Object: r.obj.DeepCopyObject(), OldObject: deepCopy(r.old), Record: admission.NewRecord()}
}

func deepCopy(o runtime.Object) runtime.Object {
	if o == nil {
		return nil
	}
	return o.DeepCopyObject()
}

// outcome is what a plugin did with a request: the error of the mutating
// phase, else of the validating phase, and the object after the mutating
// phase.
type outcome struct {
	err error
	obj runtime.Object
}

func runOurs(r request) outcome {
	p := ours.New(ranges(r.ranges), ours.Options{PodLevelResources: r.podLevel})
	a := r.attributes()
	if !p.Handles(a.Operation) {
		return outcome{obj: a.Object}
	}
	err := p.Admit(context.Background(), a)
	if err == nil {
		err = p.Validate(context.Background(), a)
	}
	return outcome{err: err, obj: a.Object}
}

// runUpstream runs upstream's plugin with the LimitRanges in the order
// admitd lists them: upstream lists them from an informer index in Go's
// random map order, so with several LimitRanges its result varies between
// requests; one plugin per LimitRange, run in turn, is upstream's result
// for that order (each LimitRange is applied in turn, the first error
// wins).
func runUpstream(t testing.TB, r request) outcome {
	sorted := slices.Clone(r.ranges)
	slices.SortStableFunc(sorted, func(a, b *corev1.LimitRange) int { return strings.Compare(a.Name, b.Name) })
	plugins := []*upstream.LimitRanger{upstreamPlugin(t)}
	if len(sorted) > 0 {
		plugins = plugins[:0]
		for _, lr := range sorted {
			plugins = append(plugins, upstreamPlugin(t, lr))
		}
	}
	a := r.attributes()
	obj, old := toInternal(t, a.Object), toInternal(t, a.OldObject)
	ua := upadmission.NewAttributesRecord(obj, old, a.Kind, a.Namespace, a.Name, a.Resource, a.Subresource,
		upadmission.Operation(a.Operation), nil, false, nil)
	if !plugins[0].Handles(ua.GetOperation()) {
		return outcome{obj: toV1(t, obj)}
	}
	for _, p := range plugins {
		if err := p.Admit(context.Background(), ua, nil); err != nil {
			return outcome{err: err, obj: toV1(t, obj)}
		}
	}
	for _, p := range plugins {
		if err := p.Validate(context.Background(), ua, nil); err != nil {
			return outcome{err: err, obj: toV1(t, obj)}
		}
	}
	return outcome{obj: toV1(t, obj)}
}

func toInternal(t testing.TB, obj runtime.Object) runtime.Object {
	if obj == nil {
		return nil
	}
	out, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func toV1(t testing.TB, obj runtime.Object) runtime.Object {
	out, err := legacyscheme.Scheme.ConvertToVersion(obj, corev1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return out
}

// stats counts how the comparisons went.
type stats struct {
	cases, refused, mutated, reordered int
	outcomes                           map[string]int
}

// compareAll compares every request, with upstream's PodLevelResources
// gate set as each request says (one subtest per gate value).
func (s *stats) compareAll(t *testing.T, rs []request) {
	t.Helper()
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("PodLevelResources=%v", on), func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, kubefeatures.PodLevelResources, on)
			for _, r := range rs {
				if r.podLevel == on {
					s.compare(t, r)
				}
			}
		})
	}
}

// compare sends r through both plugins and reports any difference.
func (s *stats) compare(t *testing.T, r request) {
	t.Helper()
	got := runOurs(r)
	want := runUpstream(t, r)
	s.cases++
	if s.outcomes == nil {
		s.outcomes = map[string]int{}
	}
	s.outcomes[shape(want.err)]++
	if want.err != nil {
		s.refused++
	}
	if !equality.Semantic.DeepEqual(r.obj, want.obj) {
		s.mutated++
	}
	if g, w := describe(got.err), describe(want.err); g != w {
		// Upstream walks each item's min, max and ratio maps in Go's
		// random map order: several violations of one kind may come in
		// another order. Only such a reordering is allowed.
		if canonical(g) == canonical(w) {
			s.reordered++
		} else {
			t.Errorf("%s: error\n admitd   = %s\n upstream = %s", r.name, g, w)
		}
	}
	if !equality.Semantic.DeepEqual(got.obj, want.obj) {
		t.Errorf("%s: object (-admitd +upstream):\n%s", r.name, diff.Diff(got.obj, want.obj))
	}
}

func describe(err error) string {
	if err == nil {
		return "admitted"
	}
	var code int32
	var reason string
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		code, reason = st.Status().Code, string(st.Status().Reason)
	}
	return fmt.Sprintf("%d %s %q", code, reason, err.Error())
}

// shape is the error with its quantities and names left out, to count the
// distinct kinds of outcome.
func shape(err error) string {
	if err == nil {
		return "admitted"
	}
	var parts []string
	for _, w := range strings.Fields(err.Error()) {
		if strings.ContainsAny(w, "0123456789\"") {
			w = "#"
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, " ")
}

// canonical sorts the violations of an aggregated LimitRanger message
// within each run of consecutive violations of the same kind (min, max or
// ratio) and limit type: the only order upstream leaves to chance.
func canonical(msg string) string {
	i := strings.Index(msg, ": [")
	if i < 0 || !strings.HasSuffix(msg, "]\"") {
		return msg
	}
	body := msg[i+3 : len(msg)-2]
	var parts []string
	for _, piece := range strings.Split(body, ", ") {
		if len(parts) > 0 && !startsViolation(piece) {
			parts[len(parts)-1] += ", " + piece
			continue
		}
		parts = append(parts, piece)
	}
	var out []string
	for start := 0; start < len(parts); {
		end := start + 1
		for end < len(parts) && violationKey(parts[end]) == violationKey(parts[start]) {
			end++
		}
		run := slices.Clone(parts[start:end])
		slices.Sort(run)
		out = append(out, run...)
		start = end
	}
	return msg[:i+3] + strings.Join(out, ", ") + msg[len(msg)-2:]
}

func startsViolation(s string) bool {
	return strings.HasPrefix(s, "minimum ") || strings.HasPrefix(s, "maximum ") ||
		(!strings.HasPrefix(s, "but ") && strings.Contains(s, " max limit to request ratio per "))
}

// violationKey is a violation's kind and limit type.
func violationKey(s string) string {
	kind := "ratio"
	if f := strings.Fields(s); f[0] == "minimum" || f[0] == "maximum" {
		kind = f[0]
	}
	_, after, _ := strings.Cut(s, " per ")
	typ, _, _ := strings.Cut(after, " ")
	return kind + " " + typ
}
