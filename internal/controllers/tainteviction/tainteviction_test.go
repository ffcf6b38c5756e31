package tainteviction

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/controllertest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const ns = "default"

// env is an in-process API server running the controller on a fake clock.
type env struct {
	t       *testing.T
	s       *controllertest.Server
	admin   kubernetes.Interface
	clock   *clocktesting.FakeClock
	c       *Controller
	metrics *Metrics
}

func start(t *testing.T) *env {
	t.Helper()
	s := controllertest.Start(t)
	client, recorder := s.Controller(User, Component)
	e := &env{t: t, s: s, admin: s.Admin, clock: clocktesting.NewFakeClock(time.Now()), metrics: NewMetrics()}
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: client, Recorder: recorder, Log: s.Log,
		Clock: e.clock, Metrics: e.metrics})
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	go c.Run(s.Ctx)
	return e
}

func (e *env) node(name string, taints ...corev1.Taint) {
	e.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: taints}}
	if _, err := e.admin.CoreV1().Nodes().Create(e.s.Ctx, n, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) setTaints(name string, taints ...corev1.Taint) {
	e.t.Helper()
	n, err := e.admin.CoreV1().Nodes().Get(e.s.Ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	n.Spec.Taints = taints
	if _, err := e.admin.CoreV1().Nodes().Update(e.s.Ctx, n, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) pod(name, node string, tolerations ...corev1.Toleration) {
	e.t.Helper()
	// the finalizer keeps a deleted pod, with its conditions, to look at
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Finalizers: []string{"test.admitd.io/keep"}},
		Spec: corev1.PodSpec{NodeName: node, Tolerations: tolerations, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	if _, err := e.admin.CoreV1().Pods(ns).Create(e.s.Ctx, p, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// state is how a pod stands: "gone", "deleting" or "running", with its
// DisruptionTarget condition if any.
func (e *env) state(name string) string {
	e.t.Helper()
	p, err := e.admin.CoreV1().Pods(ns).Get(e.s.Ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "gone"
	}
	if err != nil {
		e.t.Fatal(err)
	}
	out := "running"
	if p.DeletionTimestamp != nil {
		out = "deleting"
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			out += fmt.Sprintf(" %s/%s/%s: %s", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	return out
}

const marked = "deleting DisruptionTarget/True/DeletionByTaintManager: Taint manager: deleting due to NoExecute taint"

func (e *env) waitState(name, want string) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, "pod "+name+": "+want, func() (bool, string) {
		got := e.state(name)
		return got == want, got
	})
}

// events are "name: source reason: message" of the pods' events, sorted.
func (e *env) events() []string {
	e.t.Helper()
	list, err := e.admin.CoreV1().Events(ns).List(e.s.Ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		out = append(out, fmt.Sprintf("%s/%s: %s %s %s: %s", ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Source.Component,
			ev.Type, ev.Reason, ev.Message))
	}
	slices.Sort(out)
	return out
}

func (e *env) waitEvents(want ...string) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, "events", func() (bool, string) {
		got := e.events()
		return slices.Equal(got, want), strings.Join(got, "\n")
	})
}

func (e *env) waitScheduled(n int) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, fmt.Sprintf("%d deletions scheduled", n), func() (bool, string) {
		got := e.c.deletions.scheduled()
		return got == n, fmt.Sprint(got)
	})
}

// gone deletes the pod for good.
func (e *env) gone(name string) {
	e.t.Helper()
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := e.admin.CoreV1().Pods(ns).Patch(e.s.Ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.admin.CoreV1().Pods(ns).Delete(e.s.Ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		e.t.Fatal(err)
	}
	if got := e.state(name); got != "gone" {
		e.t.Fatalf("pod %s is %s after its deletion", name, got)
	}
}

// stays checks that the pod is still running, not marked, a while after
// the controller could have acted.
func (e *env) stays(name string) {
	e.t.Helper()
	time.Sleep(300 * time.Millisecond)
	if got := e.state(name); got != "running" {
		e.t.Errorf("pod %s: %s, want it left running", name, got)
	}
}

var (
	noExec  = taint("dedicated", "db", corev1.TaintEffectNoExecute)
	noSched = taint("dedicated", "db", corev1.TaintEffectNoSchedule)
)

// A pod that does not tolerate its node's NoExecute taint gets the
// DisruptionTarget condition and is deleted at once, with an event; a pod
// on a node tainted NoSchedule only and one tolerating the taint for ever
// stay (so does one whose tolerationSeconds is past a Duration's range),
// and an unbound one until it is bound to the tainted node.
func TestUntoleratedDeletedAtOnce(t *testing.T) {
	e := start(t)
	e.node("tainted", noExec, noSched)
	e.node("nosched", noSched)
	e.pod("victim", "tainted")
	e.pod("forever", "tainted", toleration("dedicated", "*", corev1.TaintEffectNoExecute, -1), toleration("", "*", corev1.TaintEffectNoSchedule, -1))
	// tolerationSeconds past a Duration's range: for ever too, as upstream
	e.pod("huge", "tainted", toleration("dedicated", "*", corev1.TaintEffectNoExecute, 9223372037))
	e.pod("nosched-pod", "nosched")
	e.pod("unbound", "")
	e.waitState("victim", marked)
	e.waitEvents("Pod/victim: taint-eviction-controller Normal TaintManagerEviction: Marking for deletion Pod default/victim")
	for _, name := range []string{"forever", "huge", "nosched-pod", "unbound"} {
		e.stays(name)
	}
	// bound at last, the pod is judged against its node's taints
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "unbound", Namespace: ns},
		Target: corev1.ObjectReference{Kind: "Node", Name: "tainted"}}
	if err := e.admin.CoreV1().Pods(ns).Bind(e.s.Ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitState("unbound", marked)
	if got := testutil.ToFloat64(e.metrics.deletions); got != 2 {
		t.Errorf("pod_deletions_total = %v, want 2", got)
	}
	if n := testutil.CollectAndCount(e.metrics.latency); n != 1 {
		t.Errorf("pod_deletion_duration_seconds has %d series, want 1", n)
	}
	reg := prometheus.NewRegistry()
	if err := e.metrics.Register(reg); err != nil || e.metrics.Register(reg) != nil {
		t.Errorf("registering the metrics (twice): %v", err)
	}
}

// A pod tolerating the taint for 30 s (and another for 60) is deleted
// once the clock passes 30 s, not before.
func TestToleratedDeletedAfterTolerationSeconds(t *testing.T) {
	e := start(t)
	e.node("n1")
	e.pod("p", "n1", toleration("dedicated", "db", corev1.TaintEffectNoExecute, 60), toleration("other", "*", corev1.TaintEffectNoExecute, 30))
	e.setTaints("n1", noExec, taint("other", "", corev1.TaintEffectNoExecute))
	e.waitScheduled(1)
	e.clock.Step(29 * time.Second)
	e.stays("p")
	e.clock.Step(2 * time.Second)
	e.waitState("p", marked)
	e.waitEvents("Pod/p: taint-eviction-controller Normal TaintManagerEviction: Marking for deletion Pod default/p")
	if got := testutil.ToFloat64(e.metrics.deletions); got != 1 {
		t.Errorf("pod_deletions_total = %v, want 1", got)
	}
}

// A scheduled deletion is cancelled, with an event, when the taint goes
// before its time, and when the pod is deleted; neither pod is deleted by
// the controller afterwards.
func TestDeletionCancelled(t *testing.T) {
	e := start(t)
	e.node("n1", noExec)
	tol := toleration("dedicated", "db", corev1.TaintEffectNoExecute, 30)
	e.pod("p", "n1", tol)
	e.pod("q", "n1", tol)
	e.waitScheduled(2)
	e.clock.Step(10 * time.Second)
	e.gone("q")
	e.waitScheduled(1)
	e.setTaints("n1", noSched)
	e.waitScheduled(0)
	e.waitEvents(
		"Pod/p: taint-eviction-controller Normal TaintManagerEviction: Cancelling deletion of Pod default/p",
		"Pod/q: taint-eviction-controller Normal TaintManagerEviction: Cancelling deletion of Pod default/q")
	e.clock.Step(time.Minute)
	e.stays("p")
	if got := testutil.ToFloat64(e.metrics.deletions); got != 0 {
		t.Errorf("pod_deletions_total = %v, want 0", got)
	}
}

// A pod already marked by the controller (as after a failed delete) is
// deleted without another status patch, as upstream: a difference in the
// condition's observedGeneration alone is not patched.
func TestMarkedPodNotPatchedAgain(t *testing.T) {
	e := start(t)
	e.node("n1")
	e.pod("p", "n1")
	p, err := e.admin.CoreV1().Pods(ns).Get(e.s.Ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Generation == 0 {
		t.Fatal("the pod has no generation: the test cannot tell a patch")
	}
	cond := disruptionCondition(p)
	cond.ObservedGeneration = 0
	cond.LastTransitionTime = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p.Status.Conditions = []corev1.PodCondition{cond}
	if _, err := e.admin.CoreV1().Pods(ns).UpdateStatus(e.s.Ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.setTaints("n1", noExec)
	e.waitState("p", marked)
	p, err = e.admin.CoreV1().Pods(ns).Get(e.s.Ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Status.Conditions[0].ObservedGeneration; got != 0 {
		t.Errorf("the condition's observedGeneration is %d, want 0 kept (no patch)", got)
	}
}

// A scheduled deletion stands, as upstream's: a new taint that would
// shorten the wait does not move it, and deleting the pod's node does
// not cancel it; it runs at its time, with no cancelling event.
func TestScheduledDeletionStands(t *testing.T) {
	e := start(t)
	e.node("n1", noExec)
	e.pod("p", "n1", toleration("dedicated", "db", corev1.TaintEffectNoExecute, 60), toleration("other", "*", corev1.TaintEffectNoExecute, 10))
	e.waitScheduled(1)
	e.setTaints("n1", noExec, taint("other", "", corev1.TaintEffectNoExecute))
	e.clock.Step(15 * time.Second)
	e.stays("p")
	if err := e.admin.CoreV1().Nodes().Delete(e.s.Ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.stays("p")
	e.waitScheduled(1)
	e.clock.Step(46 * time.Second)
	e.waitState("p", marked)
	e.waitEvents("Pod/p: taint-eviction-controller Normal TaintManagerEviction: Marking for deletion Pod default/p")
}
