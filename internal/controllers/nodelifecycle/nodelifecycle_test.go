package nodelifecycle

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

// env is an in-process API server over memory storage running the
// controller on a fake clock, with an admin client.
type env struct {
	t     *testing.T
	admin kubernetes.Interface
	clock *clocktesting.FakeClock
	// healthy are nodes whose kubelet renews their lease at every step.
	healthy []string
}

var ctx = context.Background()

func start(t *testing.T) *env {
	t.Helper()
	s := controllertest.Start(t)
	client, recorder := s.Controller(User, Component)
	clk := clocktesting.NewFakeClock(time.Now())
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: client, Recorder: recorder, Log: s.Log, Clock: clk, Metrics: NewMetrics()})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	return &env{t: t, admin: s.Admin, clock: clk}
}

// eventually waits for cond, stepping the fake clock by step at each try
// (the healthy nodes renewing their leases each time).
func (e *env) eventually(what string, step time.Duration, cond func() (bool, string)) {
	e.t.Helper()
	var last string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		e.clock.Step(step)
		for _, name := range e.healthy {
			e.renewLease(name)
		}
		var ok bool
		if ok, last = cond(); ok {
			return
		}
	}
	e.t.Fatalf("%s: after 15s: %s", what, last)
}

// steps moves the fake clock on by total, a second at a time, letting the
// controller run at each.
func (e *env) steps(total time.Duration) {
	e.t.Helper()
	for moved := time.Duration(0); moved < total; moved += time.Second {
		e.clock.Step(time.Second)
		for _, name := range e.healthy {
			e.renewLease(name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// node creates a node with the labels and, when ready is not "", a Ready
// condition of that status heartbeating now.
func (e *env) node(name string, ready corev1.ConditionStatus, labels map[string]string) *corev1.Node {
	e.t.Helper()
	n, err := e.admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if ready == "" {
		return n
	}
	return e.postStatus(name, ready)
}

// postStatus posts a Ready condition of status, heartbeating at the fake
// clock's now, as the node's kubelet.
func (e *env) postStatus(name string, status corev1.ConditionStatus) *corev1.Node {
	e.t.Helper()
	var n *corev1.Node
	// the controller writes the node too (taints, labels): retry on conflict
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() (err error) {
		n, err = e.tryPostStatus(name, status)
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) tryPostStatus(name string, status corev1.ConditionStatus) (*corev1.Node, error) {
	n, err := e.admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	now := metav1.NewTime(e.clock.Now())
	cond := condition(&n.Status, corev1.NodeReady)
	if cond == nil {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady})
		cond = &n.Status.Conditions[len(n.Status.Conditions)-1]
	}
	if cond.Status != status {
		cond.LastTransitionTime = now
	}
	cond.Status, cond.LastHeartbeatTime, cond.Reason, cond.Message = status, now, "KubeletReady", "kubelet is posting ready status"
	return e.admin.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
}

// renewLease creates or renews the node's lease at the fake clock's now.
func (e *env) renewLease(name string) {
	e.t.Helper()
	now := metav1.NewMicroTime(e.clock.Now())
	leases := e.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	l, err := leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &now}}
		if _, err := leases.Create(ctx, l, metav1.CreateOptions{}); err != nil {
			e.t.Fatal(err)
		}
		return
	}
	l.Spec.RenewTime = &now
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) pod(name, node string) {
	e.t.Helper()
	p, err := e.admin.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := e.admin.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) get(name string) *corev1.Node {
	e.t.Helper()
	n, err := e.admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// taints are "key:Effect" of the node's taints, sorted; timeAdded is
// required on each.
func (e *env) taints(name string) string {
	e.t.Helper()
	var out []string
	for _, t := range e.get(name).Spec.Taints {
		if t.TimeAdded == nil {
			e.t.Errorf("node %s: taint %s:%s has no timeAdded", name, t.Key, t.Effect)
		}
		out = append(out, strings.TrimPrefix(t.Key, "node.kubernetes.io/")+":"+string(t.Effect))
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// conditions are "Type=Status/Reason" of the node's conditions.
func (e *env) conditions(name string) string {
	e.t.Helper()
	var out []string
	for _, c := range e.get(name).Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return strings.Join(out, ",")
}

// events are "Kind/name type reason: message" of the events in default.
func (e *env) events() []string {
	list, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		out = append(out, fmt.Sprintf("%s/%s %s %s: %s", ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Type, ev.Reason, ev.Message))
	}
	slices.Sort(out)
	return out
}

func (e *env) waitTaints(name, want string) {
	e.t.Helper()
	e.eventually(name+" taints "+want, time.Second, func() (bool, string) {
		got := e.taints(name)
		return got == want, "taints " + got
	})
}

func (e *env) waitEvent(want string) {
	e.t.Helper()
	e.eventually("event "+want, 100*time.Millisecond, func() (bool, string) {
		got := e.events()
		return slices.Contains(got, want), fmt.Sprintf("events %q", got)
	})
}

func (e *env) podReady(name string) corev1.ConditionStatus {
	p, err := e.admin.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status
		}
	}
	return ""
}

// TestNodeThatNeverPostsBecomesUnknown: a node with no status is given
// the startup grace period, then its conditions are Unknown
// (NodeStatusNeverUpdated) and it is tainted unreachable, NoSchedule at
// once and NoExecute through its zone's queue (another node of the zone
// is healthy, so the zone is not fully disrupted).
func TestNodeThatNeverPostsBecomesUnknown(t *testing.T) {
	e := start(t)
	e.node("healthy", corev1.ConditionTrue, nil)
	e.healthy = []string{"healthy"}
	e.node("silent", "", nil)
	e.waitEvent("Node/silent Normal RegisteredNode: Node silent event: Registered Node silent in Controller")
	e.steps(30 * time.Second)
	if got := e.conditions("silent"); got != "" {
		t.Errorf("within the startup grace period the silent node has conditions %q, want none", got)
	}
	e.waitTaints("silent", "unreachable:NoExecute,unreachable:NoSchedule")
	want := "Ready=Unknown/NodeStatusNeverUpdated,MemoryPressure=Unknown/NodeStatusNeverUpdated," +
		"DiskPressure=Unknown/NodeStatusNeverUpdated,PIDPressure=Unknown/NodeStatusNeverUpdated"
	if got := e.conditions("silent"); got != want {
		t.Errorf("conditions of the silent node = %q, want %q", got, want)
	}
	if got := e.taints("healthy"); got != "" {
		t.Errorf("the healthy node has taints %q", got)
	}
	for _, ev := range e.events() {
		if strings.Contains(ev, "NodeNotReady") {
			t.Errorf("event %q: a node that was never Ready does not become NotReady", ev)
		}
	}
}

// TestNodeThatStopsHeartbeating: a Ready node whose lease is not renewed
// for the grace period becomes Unknown (NodeStatusUnknown), its pods not
// ready, with the NodeNotReady events; once it posts Ready again its
// taints go.
func TestNodeThatStopsHeartbeating(t *testing.T) {
	e := start(t)
	e.node("healthy", corev1.ConditionTrue, nil)
	e.node("worker", corev1.ConditionTrue, nil)
	e.healthy = []string{"healthy", "worker"}
	e.pod("p", "worker")
	e.waitEvent("Node/worker Normal RegisteredNode: Node worker event: Registered Node worker in Controller")
	e.steps(70 * time.Second) // leases renewed: past the grace period, still Ready
	if got := e.conditions("worker"); got != "Ready=True/KubeletReady" {
		t.Fatalf("a node renewing its lease: conditions %q", got)
	}
	e.healthy = []string{"healthy"}
	e.waitTaints("worker", "unreachable:NoExecute,unreachable:NoSchedule")
	want := "Ready=Unknown/NodeStatusUnknown,MemoryPressure=Unknown/NodeStatusNeverUpdated," +
		"DiskPressure=Unknown/NodeStatusNeverUpdated,PIDPressure=Unknown/NodeStatusNeverUpdated"
	if got := e.conditions("worker"); got != want {
		t.Errorf("conditions = %q, want %q", got, want)
	}
	e.waitEvent("Node/worker Normal NodeNotReady: Node worker status is now: NodeNotReady")
	e.waitEvent("Pod/p Warning NodeNotReady: Node is not ready")
	if got := e.podReady("p"); got != corev1.ConditionFalse {
		t.Errorf("pod on the unreachable node: Ready %q, want False", got)
	}

	e.postStatus("worker", corev1.ConditionTrue)
	e.healthy = []string{"healthy", "worker"}
	e.waitTaints("worker", "")
}

// TestConditionAndUnschedulableTaints: NoSchedule taints follow the
// conditions and spec.unschedulable on every change; a Ready False node
// is tainted not-ready NoExecute.
func TestConditionAndUnschedulableTaints(t *testing.T) {
	e := start(t)
	e.node("healthy", corev1.ConditionTrue, nil)
	e.healthy = []string{"healthy"}
	e.node("sick", corev1.ConditionFalse, nil)
	e.healthy = append(e.healthy, "sick")
	e.waitTaints("sick", "not-ready:NoExecute,not-ready:NoSchedule")

	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n := e.get("healthy")
		n.Spec.Unschedulable = true
		_, err := e.admin.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	e.waitTaints("healthy", "unschedulable:NoSchedule")

	e.postStatus("sick", corev1.ConditionTrue)
	e.waitTaints("sick", "")
}

// TestFullDisruptionTaintsNothingNoExecute: when every node of every zone
// is not Ready the controller takes the NoExecute taints off rather than
// evict everything; the NoSchedule taints stay.
func TestFullDisruptionTaintsNothingNoExecute(t *testing.T) {
	e := start(t)
	e.node("a", corev1.ConditionFalse, nil)
	e.node("b", corev1.ConditionFalse, nil)
	e.healthy = []string{"a", "b"}
	e.waitTaints("a", "not-ready:NoSchedule")
	e.steps(20 * time.Second)
	for _, name := range []string{"a", "b"} {
		if got := e.taints(name); got != "not-ready:NoSchedule" {
			t.Errorf("node %s in a fully disrupted cluster: taints %q, want not-ready:NoSchedule only", name, got)
		}
	}
}

// TestBetaLabelsFollowStableOnes: beta.kubernetes.io/os and arch are set
// from kubernetes.io/os and arch.
func TestBetaLabelsFollowStableOnes(t *testing.T) {
	e := start(t)
	e.node("n", corev1.ConditionTrue, map[string]string{corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64", "beta.kubernetes.io/arch": "arm64"})
	e.healthy = []string{"n"}
	e.eventually("beta labels", 100*time.Millisecond, func() (bool, string) {
		l := e.get("n").Labels
		return l["beta.kubernetes.io/os"] == "linux" && l["beta.kubernetes.io/arch"] == "amd64", fmt.Sprintf("labels %v", l)
	})
}

// TestExcludedNodeAloneInItsZoneIsTainted: a node excluded from the
// disruption checks counts in no zone, so its zone loses its state every
// pass; its queue stays, and the silent node is tainted NoExecute all the
// same, as upstream.
func TestExcludedNodeAloneInItsZoneIsTainted(t *testing.T) {
	e := start(t)
	e.node("healthy", corev1.ConditionTrue, nil)
	e.healthy = []string{"healthy"}
	e.node("solo", "", map[string]string{"node.kubernetes.io/exclude-disruption": "", corev1.LabelTopologyZone: "z1"})
	e.waitTaints("solo", "unreachable:NoExecute,unreachable:NoSchedule")
}
