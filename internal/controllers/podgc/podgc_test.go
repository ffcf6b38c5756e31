package podgc

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/admitd/admitd/internal/registry"
)

var t0 = time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)

// pod is a pod created at t0 plus age seconds, in phase, on node.
func pod(name string, age int, phase corev1.PodPhase, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Generation: 1,
		CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(age) * time.Second))},
		Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
}

func evictedPod(name string, age int) *corev1.Pod {
	p := pod(name, age, corev1.PodFailed, "n1")
	p.Status.Reason = "Evicted"
	return p
}

func deleting(p *corev1.Pod) *corev1.Pod {
	p.DeletionTimestamp = &metav1.Time{Time: t0.Add(time.Hour)}
	return p
}

func names(pods []*corev1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return strings.Join(out, ",")
}

func TestTerminatedOverThreshold(t *testing.T) {
	pods := []*corev1.Pod{
		pod("running", 0, corev1.PodRunning, "n1"), pod("pending", 0, corev1.PodPending, "n1"), pod("unknown", 0, corev1.PodUnknown, "n1"),
		pod("b-done", 5, corev1.PodSucceeded, "n1"), pod("a-done", 5, corev1.PodSucceeded, "n1"),
		pod("old-failed", 1, corev1.PodFailed, "n1"), pod("new-done", 9, corev1.PodSucceeded, "n1"),
		evictedPod("evicted-late", 20), pod("odd-phase", 30, "Strange", "n1"),
	}
	for _, tc := range []struct {
		threshold int
		want      string
	}{
		{10, ""}, {6, ""}, {5, "evicted-late"}, {3, "evicted-late,old-failed,a-done"},
		{0, "evicted-late,old-failed,a-done,b-done,new-done,odd-phase"},
	} {
		if got := names(TerminatedOverThreshold(pods, tc.threshold)); got != tc.want {
			t.Errorf("TerminatedOverThreshold(threshold %d) = %q, want %q", tc.threshold, got, tc.want)
		}
	}
}

func node(name string, ready bool, taints ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
	for _, key := range taints {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute})
	}
	return n
}

func TestTerminatingOnOutOfServiceNodes(t *testing.T) {
	nodes := map[string]*corev1.Node{
		"down-oos":  node("down-oos", false, "other", corev1.TaintNodeOutOfService),
		"ready-oos": node("ready-oos", true, corev1.TaintNodeOutOfService),
		"down":      node("down", false, corev1.TaintNodeNotReady),
		"nostatus":  {ObjectMeta: metav1.ObjectMeta{Name: "nostatus"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: corev1.TaintNodeOutOfService}}}},
	}
	pods := []*corev1.Pod{
		deleting(pod("late", 9, corev1.PodRunning, "down-oos")), deleting(pod("early", 1, corev1.PodRunning, "down-oos")),
		pod("not-deleting", 0, corev1.PodRunning, "down-oos"),
		deleting(pod("on-ready", 0, corev1.PodRunning, "ready-oos")), deleting(pod("on-down", 0, corev1.PodRunning, "down")),
		deleting(pod("on-gone", 0, corev1.PodRunning, "gone")), deleting(pod("unscheduled", 0, corev1.PodPending, "")),
		deleting(pod("no-status", 5, corev1.PodRunning, "nostatus")),
	}
	if got, want := names(TerminatingOnOutOfServiceNodes(pods, nodes)), "early,no-status,late"; got != want {
		t.Errorf("TerminatingOnOutOfServiceNodes = %q, want %q", got, want)
	}
	if got, want := names(UnscheduledTerminating(pods)), "unscheduled"; got != want {
		t.Errorf("UnscheduledTerminating = %q, want %q", got, want)
	}
}

func TestFailedStatus(t *testing.T) {
	now := metav1.NewTime(t0.Add(time.Hour))
	before := metav1.NewTime(t0)
	p := pod("p", 0, corev1.PodRunning, "n1")
	p.Generation = 3
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: before}}
	s := FailedStatus(p, orphanCondition(p), now)
	want := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, ObservedGeneration: 3,
		Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists", LastTransitionTime: now}
	if s.Phase != corev1.PodFailed || s.ObservedGeneration != 3 || len(s.Conditions) != 2 || s.Conditions[1] != want {
		t.Errorf("FailedStatus = %+v, want phase Failed, observed 3, conditions [Ready %+v]", s, want)
	}
	if p.Status.Phase != corev1.PodRunning || len(p.Status.Conditions) != 1 {
		t.Errorf("FailedStatus changed the pod's own status: %+v", p.Status)
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "EvictionByEvictionAPI", LastTransitionTime: before})
	s = FailedStatus(p, orphanCondition(p), now)
	if c := s.Conditions[1]; len(s.Conditions) != 2 || c.Reason != "DeletionByPodGC" || !c.LastTransitionTime.Equal(&before) {
		t.Errorf("FailedStatus over a True DisruptionTarget = %+v, want it replaced, its transition time kept", s.Conditions)
	}
	if s := FailedStatus(p, nil, now); !slices.Equal(s.Conditions, p.Status.Conditions) {
		t.Errorf("FailedStatus without a condition changed the conditions: %+v", s.Conditions)
	}
}

func TestStatusPatch(t *testing.T) {
	p := pod("p", 0, corev1.PodRunning, "n1")
	p.UID = "u-1"
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	patch, err := StatusPatch(p, FailedStatus(p, orphanCondition(p), metav1.NewTime(t0)))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"uid":"u-1"},"status":{"$setElementOrder/conditions":[{"type":"Ready"},{"type":"DisruptionTarget"}],` +
		`"conditions":[{"lastProbeTime":null,"lastTransitionTime":"2026-11-29T20:00:00Z","message":"PodGC: node no longer exists",` +
		`"observedGeneration":1,"reason":"DeletionByPodGC","status":"True","type":"DisruptionTarget"}],"observedGeneration":1,"phase":"Failed"}}`
	if string(patch) != want {
		t.Errorf("StatusPatch =\n%s\nwant\n%s", patch, want)
	}
}

// One pass with a client: the terminated pod beyond the threshold is
// deleted as it is; the orphan of a gone node (no quarantine) is failed
// with DisruptionTarget first; the unscheduled terminating pod is failed
// without it; a pod on a listed node stays.
func TestCollect(t *testing.T) {
	client := fake.NewClientset()
	c, err := New(Config{Catalogue: registry.NewCatalogue(), Client: client, Log: slog.New(slog.DiscardHandler), TerminatedPodThreshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.missingNodes.ShutDown()
	pods := []*corev1.Pod{
		pod("done-old", 0, corev1.PodSucceeded, "n1"), pod("done-new", 5, corev1.PodSucceeded, "n1"),
		pod("orphan", 0, corev1.PodRunning, "gone"), pod("fine", 0, corev1.PodRunning, "n1"),
		deleting(pod("unscheduled", 0, corev1.PodPending, "")),
	}
	for _, p := range pods {
		if err := client.Tracker().Add(p); err != nil {
			t.Fatal(err)
		}
	}
	client.ClearActions()
	c.Collect(t.Context(), pods, []*corev1.Node{node("n1", true)})
	var got []string
	for _, a := range client.Actions() {
		got = append(got, describe(a))
	}
	sort.Strings(got)
	want := []string{
		"delete pods ns/done-old grace=0",
		"delete pods ns/orphan grace=0",
		"delete pods ns/unscheduled grace=0",
		"get nodes gone",
		`patch pods/status ns/orphan conditions=DisruptionTarget/True/DeletionByPodGC phase=Failed`,
		`patch pods/status ns/unscheduled conditions= phase=Failed`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("actions:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// describe is a client action in a line.
func describe(a clienttesting.Action) string {
	res := a.GetResource().Resource
	if a.GetSubresource() != "" {
		res += "/" + a.GetSubresource()
	}
	switch a := a.(type) {
	case clienttesting.DeleteAction:
		return fmt.Sprintf("delete %s %s/%s grace=%d", res, a.GetNamespace(), a.GetName(), *a.GetDeleteOptions().GracePeriodSeconds)
	case clienttesting.PatchAction:
		var p corev1.Pod
		if err := json.Unmarshal(a.GetPatch(), &p); err != nil {
			return "bad patch " + string(a.GetPatch())
		}
		var conds []string
		for _, c := range p.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s/%s/%s", c.Type, c.Status, c.Reason))
		}
		return fmt.Sprintf("patch %s %s/%s conditions=%s phase=%s", res, a.GetNamespace(), a.GetName(), strings.Join(conds, ","), p.Status.Phase)
	case clienttesting.GetAction:
		return fmt.Sprintf("get %s %s", res, a.GetName())
	}
	return a.GetVerb() + " " + res
}
