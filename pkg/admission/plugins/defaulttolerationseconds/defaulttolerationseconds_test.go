package defaulttolerationseconds

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

func seconds(s int64) *int64 { return &s }

func tol(key string, op corev1.TolerationOperator, effect corev1.TaintEffect, s *int64) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: op, Effect: effect, TolerationSeconds: s}
}

const (
	notReady    = corev1.TaintNodeNotReady
	unreachable = corev1.TaintNodeUnreachable
	exists      = corev1.TolerationOpExists
	noExecute   = corev1.TaintEffectNoExecute
	noSchedule  = corev1.TaintEffectNoSchedule
)

func TestAdmit(t *testing.T) {
	defNotReady := tol(notReady, exists, noExecute, seconds(300))
	defUnreachable := tol(unreachable, exists, noExecute, seconds(300))
	for _, tc := range []struct {
		name       string
		have, want []corev1.Toleration
	}{
		{"both added to a pod without tolerations", nil, []corev1.Toleration{defNotReady, defUnreachable}},
		{"appended after other tolerations",
			[]corev1.Toleration{{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: noSchedule}},
			[]corev1.Toleration{{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: noSchedule}, defNotReady, defUnreachable}},
		{"not-ready kept, unreachable added",
			[]corev1.Toleration{tol(notReady, exists, noExecute, seconds(60))},
			[]corev1.Toleration{tol(notReady, exists, noExecute, seconds(60)), defUnreachable}},
		{"unreachable kept, not-ready added",
			[]corev1.Toleration{tol(unreachable, exists, noExecute, seconds(60))},
			[]corev1.Toleration{tol(unreachable, exists, noExecute, seconds(60)), defNotReady}},
		{"both kept",
			[]corev1.Toleration{tol(notReady, exists, noExecute, seconds(60)), tol(unreachable, exists, noExecute, seconds(60))},
			[]corev1.Toleration{tol(notReady, exists, noExecute, seconds(60)), tol(unreachable, exists, noExecute, seconds(60))}},
		{"an empty effect tolerates NoExecute",
			[]corev1.Toleration{tol(notReady, exists, "", nil)},
			[]corev1.Toleration{tol(notReady, exists, "", nil), defUnreachable}},
		{"a NoSchedule toleration does not count",
			[]corev1.Toleration{tol(notReady, exists, noSchedule, nil)},
			[]corev1.Toleration{tol(notReady, exists, noSchedule, nil), defNotReady, defUnreachable}},
		{"an empty key tolerates both", []corev1.Toleration{tol("", exists, "", nil)}, []corev1.Toleration{tol("", exists, "", nil)}},
		{"an empty key NoExecute tolerates both", []corev1.Toleration{tol("", exists, noExecute, nil)}, []corev1.Toleration{tol("", exists, noExecute, nil)}},
		{"operator and value are not looked at",
			[]corev1.Toleration{{Key: notReady, Operator: corev1.TolerationOpEqual, Value: "x", Effect: noExecute}},
			[]corev1.Toleration{{Key: notReady, Operator: corev1.TolerationOpEqual, Value: "x", Effect: noExecute}, defUnreachable}},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Tolerations: tc.have}}
		a := admissiontest.Create(pod).Attributes()
		if err := New(Options{}).Admit(context.Background(), a); err != nil {
			t.Fatalf("%s: Admit = %v", tc.name, err)
		}
		if got := pod.Spec.Tolerations; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: tolerations = %v, want %v", tc.name, got, tc.want)
		}
		// Idempotent: a second run (reinvocation) changes nothing.
		if err := New(Options{}).Admit(context.Background(), a); err != nil || !reflect.DeepEqual(pod.Spec.Tolerations, tc.want) {
			t.Errorf("%s: second Admit = %v, tolerations %v, want unchanged", tc.name, err, pod.Spec.Tolerations)
		}
	}
}

func TestOptions(t *testing.T) {
	pod := &corev1.Pod{}
	a := admissiontest.Create(pod).Attributes()
	if err := New(Options{NotReadySeconds: seconds(0), UnreachableSeconds: seconds(17)}).Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	want := []corev1.Toleration{tol(notReady, exists, noExecute, seconds(0)), tol(unreachable, exists, noExecute, seconds(17))}
	if !reflect.DeepEqual(pod.Spec.Tolerations, want) {
		t.Errorf("tolerations = %v, want %v", pod.Spec.Tolerations, want)
	}
}

func TestIgnored(t *testing.T) {
	pod := &corev1.Pod{}
	for _, sub := range []string{"status", "binding"} {
		a := admissiontest.Create(pod).Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, sub).Attributes()
		if err := New(Options{}).Admit(context.Background(), a); err != nil || pod.Spec.Tolerations != nil {
			t.Errorf("Admit(pods/%s) = %v, tolerations %v; want nothing done", sub, err, pod.Spec.Tolerations)
		}
	}
	a := admissiontest.Create(&corev1.Node{}).Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "").Attributes()
	if err := New(Options{}).Admit(context.Background(), a); err == nil || err.Error() != "expected *api.Pod but got *v1.Node" {
		t.Errorf("Admit(a Node as a pod) = %v, want BadRequest", err)
	}
}
