// Package taintnodesbycondition compares admitd's TaintNodesByCondition
// with upstream's plugin/pkg/admission/nodetaint over upstream's test table
// and generated nodes.
package taintnodesbycondition

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/nodetaint"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/taintnodesbycondition"
	"github.com/admitd/admitd/test/upstream/internal/tolgen"
)

var nodes = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

func compare(t *testing.T, name string, a *admission.Attributes) {
	t.Helper()
	up := upstream.NewPlugin()
	ua := tolgen.Upstream(t, a)
	if got, want := (ours.Plugin{}).Handles(a.Operation), up.Handles(upadmission.Operation(a.Operation)); got != want {
		t.Fatalf("%s: Handles(%s) = %v, upstream %v", name, a.Operation, got, want)
	}
	if !up.Handles(upadmission.Operation(a.Operation)) {
		return
	}
	ourErr := (ours.Plugin{}).Admit(context.Background(), a)
	upErr := up.Admit(context.Background(), ua, nil)
	tolgen.Same(t, name, ourErr, upErr, tolgen.RoundTrip(t, a.Object), tolgen.ToV1(t, ua.GetObject(), corev1.SchemeGroupVersion))
}

func node(taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "mynode"}, Spec: corev1.NodeSpec{Taints: taints}}
}

// Upstream's table (Test_nodeTaints) and a few more.
func TestUpstreamTable(t *testing.T) {
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	unready := node()
	unready.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}
	for name, a := range map[string]*admission.Attributes{
		"notReady taint is added on creation":          admissiontest.Create(node()).Attributes(),
		"already tainted node is not tainted again":    admissiontest.Create(node(notReady)).Attributes(),
		"NotReady taint is added to an unready node":   admissiontest.Create(unready).Attributes(),
		"update is not handled":                        admissiontest.Update(node(), node()).Attributes(),
		"status subresource is ignored":                admissiontest.Create(node()).Resource(nodes, "status").Attributes(),
		"other resources are ignored":                  admissiontest.Create(node()).Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "").Attributes(),
		"a taint with a value and the same key/effect": admissiontest.Create(node(corev1.Taint{Key: corev1.TaintNodeNotReady, Value: "x", Effect: corev1.TaintEffectNoSchedule})).Attributes(),
	} {
		compare(t, name, a)
	}
}

func TestGenerated(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	keys := []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, "dedicated", ""}
	effects := []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute, corev1.TaintEffectPreferNoSchedule, ""}
	const n = 500
	for i := range n {
		var taints []corev1.Taint
		if r.Intn(5) == 0 {
			taints = []corev1.Taint{}
		}
		for range r.Intn(4) {
			tt := corev1.Taint{Key: keys[r.Intn(len(keys))], Effect: effects[r.Intn(len(effects))], Value: []string{"", "x"}[r.Intn(2)]}
			if r.Intn(4) == 0 {
				tt.TimeAdded = &metav1.Time{}
			}
			taints = append(taints, tt)
		}
		compare(t, fmt.Sprintf("generated %d %v", i, taints), admissiontest.Create(node(taints...)).Attributes())
	}
	t.Logf("%d generated nodes", n)
}
