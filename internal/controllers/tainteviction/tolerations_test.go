package tainteviction

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func taint(key, value string, effect corev1.TaintEffect) corev1.Taint {
	return corev1.Taint{Key: key, Value: value, Effect: effect}
}

// toleration tolerates key=value (any value when value is "*") of effect
// (any when ""), for seconds (none when negative).
func toleration(key, value string, effect corev1.TaintEffect, seconds int64) corev1.Toleration {
	t := corev1.Toleration{Key: key, Value: value, Effect: effect}
	if value == "*" {
		t.Operator, t.Value = corev1.TolerationOpExists, ""
	}
	if seconds >= 0 {
		t.TolerationSeconds = ptr.To(seconds)
	}
	return t
}

func TestNoExecuteTaints(t *testing.T) {
	got := noExecuteTaints([]corev1.Taint{taint("a", "", corev1.TaintEffectNoSchedule), taint("b", "1", corev1.TaintEffectNoExecute),
		taint("c", "", corev1.TaintEffectPreferNoSchedule), taint("d", "", corev1.TaintEffectNoExecute)})
	if len(got) != 2 || got[0].Key != "b" || got[1].Key != "d" {
		t.Errorf("noExecuteTaints = %v, want b and d", got)
	}
	if got := noExecuteTaints(nil); got == nil || len(got) != 0 {
		t.Errorf("noExecuteTaints(nil) = %#v, want an empty list", got)
	}
}

func describeMatch(matched []corev1.Toleration, ok bool) string {
	if !ok {
		return "untolerated"
	}
	var out []string
	for _, m := range matched {
		s := m.Key + "/" + string(m.Operator)
		if m.TolerationSeconds != nil {
			s += fmt.Sprintf("/%ds", *m.TolerationSeconds)
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

func TestMatchTolerations(t *testing.T) {
	noExec := corev1.TaintEffectNoExecute
	taints := []corev1.Taint{taint("a", "1", noExec), taint("b", "2", noExec)}
	for _, tc := range []struct {
		name        string
		taints      []corev1.Taint
		tolerations []corev1.Toleration
		want        string
	}{
		{"no taints", nil, nil, ""},
		{"no tolerations", taints, nil, "untolerated"},
		{"one tolerated, one not", taints, []corev1.Toleration{toleration("a", "1", noExec, 5)}, "untolerated"},
		{"wrong value", taints, []corev1.Toleration{toleration("a", "9", noExec, -1), toleration("b", "2", noExec, -1)}, "untolerated"},
		{"wrong effect", taints, []corev1.Toleration{toleration("a", "1", corev1.TaintEffectNoSchedule, -1), toleration("b", "*", "", -1)}, "untolerated"},
		{"each its own", taints, []corev1.Toleration{toleration("b", "2", noExec, 7), toleration("a", "*", noExec, 5)}, "a/Exists/5s,b//7s"},
		{"the first that tolerates is used", taints,
			[]corev1.Toleration{toleration("a", "1", "", -1), toleration("a", "*", noExec, 1), toleration("", "*", "", 9)}, "a/,/Exists/9s"},
		{"wildcard", taints, []corev1.Toleration{toleration("", "*", "", 3)}, "/Exists/3s,/Exists/3s"},
		{"Gt without the gate", []corev1.Taint{taint("n", "5", noExec)},
			[]corev1.Toleration{{Key: "n", Operator: corev1.TolerationOpGt, Value: "3"}}, "untolerated"},
	} {
		if got := describeMatch(matchTolerations(tc.taints, tc.tolerations, false)); got != tc.want {
			t.Errorf("%s: matchTolerations = %q, want %q", tc.name, got, tc.want)
		}
	}
	gt := []corev1.Toleration{{Key: "n", Operator: corev1.TolerationOpGt, Value: "3"}}
	if got := describeMatch(matchTolerations([]corev1.Taint{taint("n", "5", noExec)}, gt, true)); got != "n/Gt" {
		t.Errorf("Gt with the gate: matchTolerations = %q, want n/Gt", got)
	}
}

func TestTolerationTime(t *testing.T) {
	tol := func(seconds ...int64) []corev1.Toleration {
		var out []corev1.Toleration
		for _, s := range seconds {
			out = append(out, toleration("k", "*", corev1.TaintEffectNoExecute, s))
		}
		return out
	}
	for _, tc := range []struct {
		matched []corev1.Toleration
		want    time.Duration
	}{
		{nil, 0},
		{tol(-1), forever},
		{tol(-1, -1), forever},
		{tol(30), 30 * time.Second},
		{tol(-1, 30, 10, 20), 10 * time.Second},
		{tol(30, 0, 10), 0},
		{tol(30, -1, 10), 10 * time.Second},
	} {
		var desc []string
		for _, m := range tc.matched {
			if m.TolerationSeconds == nil {
				desc = append(desc, "none")
			} else {
				desc = append(desc, fmt.Sprint(*m.TolerationSeconds))
			}
		}
		if got := tolerationTime(tc.matched); got != tc.want {
			t.Errorf("tolerationTime(%v) = %v, want %v", desc, got, tc.want)
		}
	}
	// a negative tolerationSeconds (validation allows it) means at once
	neg := []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](-5)}}
	if got := tolerationTime(neg); got != 0 {
		t.Errorf("tolerationTime(-5s) = %v, want 0", got)
	}
}

func TestSetCondition(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := then.Add(time.Hour)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: then}

	s := corev1.PodStatus{Conditions: []corev1.PodCondition{ready}}
	if !setCondition(&s, disruptionCondition(pod), now) || len(s.Conditions) != 2 {
		t.Fatalf("a new condition: not added: %+v", s.Conditions)
	}
	want := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, ObservedGeneration: 4,
		Reason: "DeletionByTaintManager", Message: "Taint manager: deleting due to NoExecute taint", LastTransitionTime: metav1.NewTime(now)}
	if s.Conditions[1] != want {
		t.Errorf("added %+v, want %+v", s.Conditions[1], want)
	}

	// the same condition, at an older generation: nothing to patch
	same := want
	same.ObservedGeneration, same.LastTransitionTime = 2, then
	s = corev1.PodStatus{Conditions: []corev1.PodCondition{same}}
	if setCondition(&s, disruptionCondition(pod), now) {
		t.Errorf("the condition as set already reported changed")
	}

	// another reason, same status: changed, its transition time kept
	other := same
	other.Reason = "EvictionByEvictionAPI"
	s = corev1.PodStatus{Conditions: []corev1.PodCondition{ready, other}}
	if !setCondition(&s, disruptionCondition(pod), now) || s.Conditions[1].Reason != "DeletionByTaintManager" ||
		!s.Conditions[1].LastTransitionTime.Equal(&then) {
		t.Errorf("another reason: got %+v, want ours with the old transition time", s.Conditions[1])
	}

	// False before: changed at now
	off := same
	off.Status = corev1.ConditionFalse
	s = corev1.PodStatus{Conditions: []corev1.PodCondition{off}}
	if !setCondition(&s, disruptionCondition(pod), now) || !s.Conditions[0].LastTransitionTime.Time.Equal(now) {
		t.Errorf("False before: got %+v, want True at now", s.Conditions[0])
	}
}

func TestStatusPatch(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u-1", Generation: 1}}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	status := pod.Status.DeepCopy()
	setCondition(status, disruptionCondition(pod), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	patch, err := statusPatch(pod, *status)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"uid":"u-1"},"status":{"$setElementOrder/conditions":[{"type":"Ready"},{"type":"DisruptionTarget"}],` +
		`"conditions":[{"lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:00:00Z","message":"Taint manager: deleting due to NoExecute taint",` +
		`"observedGeneration":1,"reason":"DeletionByTaintManager","status":"True","type":"DisruptionTarget"}]}}`
	if string(patch) != want {
		t.Errorf("statusPatch =\n%s\nwant\n%s", patch, want)
	}
}

// TestTolerationTimePastDurationRange: tolerationSeconds too large for a
// Duration wraps negative, as upstream's, and the pod is tolerated for
// ever rather than deleted at once.
func TestTolerationTimePastDurationRange(t *testing.T) {
	huge := int64(9223372037)
	if got := tolerationTime([]corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &huge}}); got >= 0 {
		t.Fatalf("tolerationTime(%d s) = %v, want a negative (wrapped) wait", huge, got)
	}
}
