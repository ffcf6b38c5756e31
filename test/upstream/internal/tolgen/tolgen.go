// Package tolgen generates the pods, tolerations, namespaces and node
// selectors the differential tests of the scheduling plugins
// (PodTolerationRestriction, RuntimeClass, PodNodeSelector,
// DefaultTolerationSeconds, ExtendedResourceToleration,
// TaintNodesByCondition) send through admitd's plugin and upstream's, and
// the conversions and comparisons they share.
package tolgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // the core types in legacyscheme

	"github.com/admitd/admitd/pkg/admission"
)

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

// Seconds is a pointer to s.
func Seconds(s int64) *int64 { return &s }

// Toleration is a random toleration over a small vocabulary full of edge
// cases (empty key, empty operator and effect, the Lt operator,
// tolerationSeconds on any effect).
func Toleration(r *rand.Rand) corev1.Toleration {
	t := corev1.Toleration{
		Key:      pick(r, "", "foo", "bar", corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, corev1.TaintNodeMemoryPressure, "example.com/gpu"),
		Operator: pick(r, corev1.TolerationOpExists, corev1.TolerationOpExists, corev1.TolerationOpEqual, corev1.TolerationOpEqual, "", corev1.TolerationOpLt),
		Effect:   pick(r, "", corev1.TaintEffectNoSchedule, corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute, corev1.TaintEffectNoExecute),
	}
	if t.Operator != corev1.TolerationOpExists || r.Intn(8) == 0 {
		t.Value = pick(r, "", "a", "b", "5")
	}
	if r.Intn(3) == 0 {
		t.TolerationSeconds = Seconds(pick[int64](r, 0, 10, 60, 300, 3600))
	}
	return t
}

// Tolerations is nil, empty or up to max random tolerations, with
// repetitions.
func Tolerations(r *rand.Rand, max int) []corev1.Toleration {
	switch r.Intn(6) {
	case 0:
		return nil
	case 1:
		return []corev1.Toleration{}
	}
	n := 1 + r.Intn(max)
	out := make([]corev1.Toleration, 0, n)
	for range n {
		if len(out) > 0 && r.Intn(6) == 0 {
			out = append(out, out[r.Intn(len(out))])
			continue
		}
		out = append(out, Toleration(r))
	}
	return out
}

// Selector is a random node selector map: nil, empty or a few labels.
func Selector(r *rand.Rand) map[string]string {
	switch r.Intn(5) {
	case 0:
		return nil
	case 1:
		return map[string]string{}
	}
	m := map[string]string{}
	for range 1 + r.Intn(3) {
		m[pick(r, "env", "zone", "disk", "sandbox")] = pick(r, "a", "b", "prod", "true")
	}
	return m
}

// SelectorString is a random selector as the namespace annotation and the
// configuration write it, malformed now and then.
func SelectorString(r *rand.Rand) string {
	m := Selector(r)
	if r.Intn(12) == 0 {
		return pick(r, "a=b=c", "env in (a)", "!env", "env!=a")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = pick(r, k+"="+m[k], " "+k+" = "+m[k]+" ", k+"=="+m[k])
	}
	return strings.Join(parts, ",")
}

// Resources is a random resource list of cpu, memory, extended and odd
// resource names.
func Resources(r *rand.Rand) corev1.ResourceList {
	if r.Intn(3) == 0 {
		return nil
	}
	l := corev1.ResourceList{}
	for range r.Intn(4) {
		name := pick[corev1.ResourceName](r, "cpu", "cpu", "memory", "memory", "ephemeral-storage", "hugepages-2Mi",
			"example.com/gpu", "foo.io/dev", "kubernetes.io/x", "requests.foo/bar", "a/b", "bad/-x")
		l[name] = resource.MustParse(pick(r, "0", "100m", "1", "1Gi", "2"))
	}
	return l
}

// Container is a random container with requests and limits.
func Container(r *rand.Rand, name string) corev1.Container {
	return corev1.Container{Name: name, Image: "i", Resources: corev1.ResourceRequirements{Requests: Resources(r), Limits: Resources(r)}}
}

// Pod is a random pod in namespace ns.
func Pod(r *rand.Rand, ns string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pick(r, "p", "q", ""), Namespace: ns}}
	if p.Name == "" {
		p.GenerateName = "gen-"
	}
	for i := range 1 + r.Intn(3) {
		p.Spec.Containers = append(p.Spec.Containers, Container(r, fmt.Sprint("c", i)))
	}
	for i := range r.Intn(2) {
		p.Spec.InitContainers = append(p.Spec.InitContainers, Container(r, fmt.Sprint("i", i)))
	}
	if r.Intn(6) == 0 {
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: Resources(r), Limits: Resources(r)}
	}
	if r.Intn(10) == 0 {
		p.Status.QOSClass = pick(r, corev1.PodQOSBestEffort, corev1.PodQOSBurstable, corev1.PodQOSGuaranteed)
	}
	p.Spec.Tolerations = Tolerations(r, 4)
	p.Spec.NodeSelector = Selector(r)
	return p
}

// Annotation is the JSON of tolerations as a namespace annotation holds
// it, or a malformed value now and then.
func Annotation(r *rand.Rand, ts []corev1.Toleration) string {
	switch r.Intn(15) {
	case 0:
		return ""
	case 1:
		return "null"
	case 2:
		return pick(r, "{", `[{"key": 5}]`, `{"key":"a"}`)
	}
	b, err := json.Marshal(ts)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// ToInternal converts a v1 object to upstream's internal type, as
// kube-apiserver decodes it.
func ToInternal(t testing.TB, obj runtime.Object) runtime.Object {
	t.Helper()
	if obj == nil {
		return nil
	}
	kinds, _, err := legacyscheme.Scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	out, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), schema.GroupVersion{Group: kinds[0].Group, Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatalf("converting %v: %v", kinds[0], err)
	}
	return out
}

// ToV1 converts an internal object back to v1.
func ToV1(t testing.TB, obj runtime.Object, gv schema.GroupVersion) runtime.Object {
	t.Helper()
	out, err := legacyscheme.Scheme.ConvertToVersion(obj, gv)
	if err != nil {
		t.Fatalf("converting %T: %v", obj, err)
	}
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return out
}

// RoundTrip is obj converted to internal and back, to compare admitd's
// result with upstream's converted one on the same footing.
func RoundTrip(t testing.TB, obj runtime.Object) runtime.Object {
	t.Helper()
	return ToV1(t, ToInternal(t, obj), corev1.SchemeGroupVersion)
}

// Upstream is the upstream attributes of a: the same request with the
// internal objects kube-apiserver would hand its plugins.
func Upstream(t testing.TB, a *admission.Attributes) upadmission.Attributes {
	t.Helper()
	info := &user.DefaultInfo{Name: a.UserInfo.Username, Groups: a.UserInfo.Groups}
	return upadmission.NewAttributesRecord(ToInternal(t, a.Object), ToInternal(t, a.OldObject), a.Kind, a.Namespace, a.Name,
		a.Resource, a.Subresource, upadmission.Operation(a.Operation), a.Options, a.DryRun, info)
}

// Describe is an error as a client sees it: status code, reason and
// message.
func Describe(err error) string {
	if err == nil {
		return "admitted"
	}
	var code int32
	var reason metav1.StatusReason
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		code, reason = st.Status().Code, st.Status().Reason
	}
	return fmt.Sprintf("%d %s %q", code, reason, err.Error())
}

// Same reports the first difference between admitd's outcome and
// upstream's: the error, then (when admitted) the object.
func Same(t testing.TB, name string, ourErr, upErr error, ours, up runtime.Object) bool {
	t.Helper()
	if got, want := Describe(ourErr), Describe(upErr); got != want {
		t.Errorf("%s:\n admitd   = %s\n upstream = %s", name, got, want)
		return false
	}
	if ourErr != nil {
		return true
	}
	if d := diff.Diff(up, ours); d != "" {
		t.Errorf("%s: mutated object differs (- upstream, + admitd):\n%s", name, d)
		return false
	}
	return true
}
