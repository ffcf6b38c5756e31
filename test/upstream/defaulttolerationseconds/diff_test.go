// Package defaulttolerationseconds compares admitd's
// DefaultTolerationSeconds with upstream's plugin, with its two flags at
// their defaults and at other values, over upstream's test table and
// generated pods.
package defaulttolerationseconds

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/defaulttolerationseconds"
	"github.com/admitd/admitd/test/upstream/internal/tolgen"
)

// plugins returns both plugins with the flags at notReady and
// unreachable seconds (upstream keeps them in package variables).
func plugins(t *testing.T, notReady, unreachable int64) (*ours.Plugin, *upstream.Plugin) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	upstream.RegisterFlags(fs)
	if err := fs.Set("default-not-ready-toleration-seconds", strconv.FormatInt(notReady, 10)); err != nil {
		t.Fatal(err)
	}
	if err := fs.Set("default-unreachable-toleration-seconds", strconv.FormatInt(unreachable, 10)); err != nil {
		t.Fatal(err)
	}
	up := upstream.NewDefaultTolerationSeconds()
	up.InspectFeatureGates(utilfeature.DefaultFeatureGate)
	if err := up.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	return ours.New(ours.Options{NotReadySeconds: &notReady, UnreachableSeconds: &unreachable}), up
}

func compare(t *testing.T, name string, our *ours.Plugin, up *upstream.Plugin, a *admission.Attributes) {
	t.Helper()
	if got, want := our.Handles(a.Operation), up.Handles(upadmission.Operation(a.Operation)); got != want {
		t.Fatalf("%s: Handles(%s) = %v, upstream %v", name, a.Operation, got, want)
	}
	if !up.Handles(upadmission.Operation(a.Operation)) {
		return
	}
	ua := tolgen.Upstream(t, a)
	upErr := up.Admit(context.Background(), ua, nil)
	ourErr := our.Admit(context.Background(), a)
	tolgen.Same(t, name, ourErr, upErr, tolgen.RoundTrip(t, a.Object), tolgen.ToV1(t, ua.GetObject(), corev1.SchemeGroupVersion))
}

func pod(ts ...corev1.Toleration) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "name", Namespace: "foo"}, Spec: corev1.PodSpec{Tolerations: ts}}
}

// Upstream's table (TestForgivenessAdmission), rewritten as inputs.
func TestUpstreamTable(t *testing.T) {
	our, up := plugins(t, 300, 300)
	sec := tolgen.Seconds
	for name, p := range map[string]*corev1.Pod{
		"no tolerations": pod(),
		"tolerations, none for not-ready or unreachable": pod(
			corev1.Toleration{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: sec(700)}),
		"not-ready:NoExecute given": pod(
			corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: sec(700)}),
		"unreachable:NoExecute given": pod(
			corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: sec(700)}),
		"both given": pod(
			corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: sec(700)},
			corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: sec(700)}),
		"unreachable without effect": pod(
			corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, TolerationSeconds: sec(700)}),
		"wildcard": pod(corev1.Toleration{Operator: corev1.TolerationOpExists, TolerationSeconds: sec(700)}),
	} {
		compare(t, name, our, up, admissiontest.Create(p).Attributes())
		compare(t, name+" (update)", our, up, admissiontest.Update(p.DeepCopy(), pod()).Attributes())
	}
	compare(t, "delete", our, up, admissiontest.Delete(pod()).Attributes())
	compare(t, "status", our, up, admissiontest.Create(pod()).Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "status").Attributes())
	compare(t, "other resource", our, up, admissiontest.Create(pod()).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "").Attributes())
}

func TestGenerated(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	n := 0
	for _, flags := range [][2]int64{{300, 300}, {0, 17}, {-1, 86400}} {
		our, up := plugins(t, flags[0], flags[1])
		for i := range 600 {
			p := tolgen.Pod(r, "ns")
			compare(t, fmt.Sprintf("flags %v pod %d %v", flags, i, p.Spec.Tolerations), our, up, admissiontest.Create(p).Attributes())
			n++
		}
	}
	t.Logf("%d generated pods", n)
}
