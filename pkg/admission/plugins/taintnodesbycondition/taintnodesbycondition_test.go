package taintnodesbycondition

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

var notReady = corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}

func node(taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "mynode"}, Spec: corev1.NodeSpec{Taints: taints}}
}

func TestAdmit(t *testing.T) {
	other := corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}
	notReadyExecute := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}
	withValue := corev1.Taint{Key: corev1.TaintNodeNotReady, Value: "x", Effect: corev1.TaintEffectNoSchedule}
	unready := node()
	unready.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		want []corev1.Taint
	}{
		{"taint added on creation", node(), []corev1.Taint{notReady}},
		{"already tainted node is not tainted again", node(notReady), []corev1.Taint{notReady}},
		{"added to an unready node as well", unready, []corev1.Taint{notReady}},
		{"appended after the node's own", node(other), []corev1.Taint{other, notReady}},
		{"another effect does not count", node(notReadyExecute), []corev1.Taint{notReadyExecute, notReady}},
		{"the value is not compared", node(withValue), []corev1.Taint{withValue}},
	} {
		a := admissiontest.Create(tc.node).Attributes()
		if err := (Plugin{}).Admit(context.Background(), a); err != nil {
			t.Fatalf("%s: Admit = %v", tc.name, err)
		}
		if got := a.Object.(*corev1.Node).Spec.Taints; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: taints = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestIgnored(t *testing.T) {
	p := Plugin{}
	if p.Handles(admission.Update) || p.Handles(admission.Delete) || !p.Handles(admission.Create) {
		t.Errorf("Handles: want CREATE only")
	}
	a := admissiontest.Create(node()).Resource(schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, "status").Attributes()
	if err := p.Admit(context.Background(), a); err != nil || len(a.Object.(*corev1.Node).Spec.Taints) != 0 {
		t.Errorf("Admit(nodes/status) = %v, taints %v; want nothing done", err, a.Object.(*corev1.Node).Spec.Taints)
	}
	a = admissiontest.Create(&corev1.Pod{}).Resource(schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, "").Attributes()
	if err := p.Admit(context.Background(), a); err == nil || err.Error() != `nodes "Unknown" is forbidden: unexpected type *v1.Pod` {
		t.Errorf("Admit(a Pod as a node) = %v, want Forbidden unexpected type", err)
	}
}
