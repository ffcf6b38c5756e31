package daemonset

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

// env is an in-process API server over memory storage running the
// DaemonSet controller, with an admin client that plays the nodes.
type env struct {
	t     *testing.T
	admin kubernetes.Interface
}

func start(t *testing.T) *env {
	t.Helper()
	s := controllertest.Start(t)
	client, recorder := s.Controller(User, Component)
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: client, Recorder: recorder, Log: s.Log})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	return &env{t: t, admin: s.Admin}
}

func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, what, cond)
}

func (e *env) createNode(name string, labels map[string]string, taints ...corev1.Taint) {
	e.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	if _, err := e.admin.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// markReady plays the scheduler and the kubelets: pods are bound to the
// node they are for, and those not yet running become Running and Ready.
func (e *env) markReady() {
	pods, err := e.admin.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	patch := []byte(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
	for _, p := range pods.Items {
		if node, err := TargetNodeName(&p); err == nil && p.Spec.NodeName == "" {
			b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
			if err := e.admin.CoreV1().Pods("default").Bind(context.Background(), b, metav1.CreateOptions{}); err != nil {
				e.t.Errorf("binding %s: %v", p.Name, err)
			}
		}
		if p.Status.Phase != corev1.PodRunning && p.DeletionTimestamp == nil {
			_, _ = e.admin.CoreV1().Pods("default").Patch(context.Background(), p.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		}
	}
}

// podsByNode is "node=hash" of each pod, sorted.
func (e *env) podsByNode() []string {
	pods, err := e.admin.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		node, _ := TargetNodeName(&p)
		out = append(out, node+"="+p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey])
	}
	sort.Strings(out)
	return out
}

func (e *env) daemonSet() *appsv1.DaemonSet {
	ds, err := e.admin.AppsV1().DaemonSets("default").Get(context.Background(), "agent", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return ds
}

func counts(s appsv1.DaemonSetStatus) string {
	return fmt.Sprintf("desired %d current %d ready %d updated %d available %d unavailable %d misscheduled %d observed %d",
		s.DesiredNumberScheduled, s.CurrentNumberScheduled, s.NumberReady, s.UpdatedNumberScheduled, s.NumberAvailable,
		s.NumberUnavailable, s.NumberMisscheduled, s.ObservedGeneration)
}

func agent(image string) *appsv1.DaemonSet {
	labels := map[string]string{"app": "agent"}
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent"}, Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"role": "worker"},
			Containers:   []corev1.Container{{Name: "agent", Image: image}}}}}}
}

var worker = map[string]string{"role": "worker"}

// One pod per eligible node: a node the nodeSelector leaves out and one
// with an untolerated NoSchedule taint get none; the pod is for its node
// by node affinity, with the hash and generation labels, the daemon
// tolerations and the controller reference; the revision is
// "<name>-<hash>". Removing the taint and adding a node each add a pod.
func TestOnePodPerEligibleNode(t *testing.T) {
	e := start(t)
	e.createNode("a", worker)
	e.createNode("b", nil)
	e.createNode("c", worker, corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule})
	created, err := e.admin.AppsV1().DaemonSets("default").Create(context.Background(), agent("nginx"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hash := Hash(created)
	e.eventually("one pod, on a", func() (bool, string) {
		got := strings.Join(e.podsByNode(), ",")
		return got == "a="+hash, "pods " + got
	})
	pods, _ := e.admin.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	p := pods.Items[0]
	if p.GenerateName != "agent-" || p.Labels["pod-template-generation"] != "1" || p.Labels["app"] != "agent" {
		t.Errorf("pod generateName %q labels %v", p.GenerateName, p.Labels)
	}
	if ref := metav1.GetControllerOf(&p); ref == nil || ref.Kind != "DaemonSet" || ref.UID != created.UID {
		t.Errorf("pod controller %v", ref)
	}
	terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || fmt.Sprint(terms[0].MatchFields) != "[{metadata.name In [a]}]" {
		t.Errorf("pod node affinity %v", terms)
	}
	if len(p.Spec.Tolerations) != 6 {
		t.Errorf("pod tolerations %v, want the 6 daemon ones", p.Spec.Tolerations)
	}
	rev, err := e.admin.AppsV1().ControllerRevisions("default").Get(context.Background(), "agent-"+hash, metav1.GetOptions{})
	if err != nil || rev.Revision != 1 {
		t.Fatalf("revision agent-%s: %v, %v", hash, rev, err)
	}
	e.markReady()
	e.eventually("status", func() (bool, string) {
		got := counts(e.daemonSet().Status)
		return got == "desired 1 current 1 ready 1 updated 1 available 1 unavailable 0 misscheduled 0 observed 1", got
	})
	node, _ := e.admin.CoreV1().Nodes().Get(context.Background(), "c", metav1.GetOptions{})
	node.Spec.Taints = nil
	if _, err := e.admin.CoreV1().Nodes().Update(context.Background(), node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.createNode("d", worker)
	e.eventually("pods on a, c and d", func() (bool, string) {
		got := strings.Join(e.podsByNode(), ",")
		return got == fmt.Sprintf("a=%s,c=%s,d=%s", hash, hash, hash), "pods " + got
	})
}

// A node tainted NoExecute loses its pod; one tainted NoSchedule keeps it,
// counted as misscheduled. (The node's change is noticed through the pods
// bound to it, as upstream's node-update queue looks up pods by
// spec.nodeName.)
func TestTaintsAfterScheduling(t *testing.T) {
	e := start(t)
	e.createNode("a", worker)
	e.createNode("b", worker)
	if _, err := e.admin.AppsV1().DaemonSets("default").Create(context.Background(), agent("nginx"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("two ready pods", func() (bool, string) {
		e.markReady()
		got := counts(e.daemonSet().Status)
		return strings.HasPrefix(got, "desired 2 current 2 ready 2"), got
	})
	for name, effect := range map[string]corev1.TaintEffect{"a": corev1.TaintEffectNoSchedule, "b": corev1.TaintEffectNoExecute} {
		node, _ := e.admin.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		node.Spec.Taints = []corev1.Taint{{Key: "k", Effect: effect}}
		if _, err := e.admin.CoreV1().Nodes().Update(context.Background(), node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually("a's pod kept, b's deleted", func() (bool, string) {
		got := strings.Join(e.podsByNode(), ",")
		st := counts(e.daemonSet().Status)
		return strings.HasPrefix(got, "a=") && !strings.Contains(got, "b=") && strings.HasPrefix(st, "desired 0 current 0 ready 0 updated 0 available 0 unavailable 0 misscheduled 1"),
			"pods " + got + "; " + st
	})
}

// A RollingUpdate (maxUnavailable 1) replaces every pod with one of the
// new template's revision, revision 2.
func TestRollingUpdate(t *testing.T) {
	e := start(t)
	for _, n := range []string{"a", "b", "c"} {
		e.createNode(n, worker)
	}
	if _, err := e.admin.AppsV1().DaemonSets("default").Create(context.Background(), agent("nginx"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("three ready pods", func() (bool, string) {
		e.markReady()
		got := counts(e.daemonSet().Status)
		return strings.HasPrefix(got, "desired 3 current 3 ready 3"), got
	})
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"nginx:2"}]}}}}`
	updated, err := e.admin.AppsV1().DaemonSets("default").Patch(context.Background(), "agent", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hash := Hash(updated)
	e.eventually("every pod replaced", func() (bool, string) {
		e.markReady()
		got := strings.Join(e.podsByNode(), ",")
		st := counts(e.daemonSet().Status)
		return got == fmt.Sprintf("a=%s,b=%s,c=%s", hash, hash, hash) &&
			st == "desired 3 current 3 ready 3 updated 3 available 3 unavailable 0 misscheduled 0 observed 2", "pods " + got + "; " + st
	})
	rev, err := e.admin.AppsV1().ControllerRevisions("default").Get(context.Background(), "agent-"+hash, metav1.GetOptions{})
	if err != nil || rev.Revision != 2 {
		t.Fatalf("revision agent-%s: %v, %v", hash, rev, err)
	}
}

// With OnDelete, a new template replaces no pod until one is deleted.
func TestOnDelete(t *testing.T) {
	e := start(t)
	e.createNode("a", worker)
	e.createNode("b", worker)
	ds := agent("nginx")
	ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	if _, err := e.admin.AppsV1().DaemonSets("default").Create(context.Background(), ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("two ready pods", func() (bool, string) {
		e.markReady()
		got := counts(e.daemonSet().Status)
		return strings.HasPrefix(got, "desired 2 current 2 ready 2"), got
	})
	old := e.podsByNode()
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"nginx:2"}]}}}}`
	updated, err := e.admin.AppsV1().DaemonSets("default").Patch(context.Background(), "agent", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.eventually("generation 2 observed, nothing updated", func() (bool, string) {
		got := counts(e.daemonSet().Status)
		return got == "desired 2 current 2 ready 2 updated 0 available 2 unavailable 0 misscheduled 0 observed 2", got
	})
	if got := e.podsByNode(); fmt.Sprint(got) != fmt.Sprint(old) {
		t.Errorf("pods %v changed to %v under OnDelete", old, got)
	}
	pods, _ := e.admin.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{FieldSelector: ""})
	for _, p := range pods.Items {
		if node, _ := TargetNodeName(&p); node == "a" {
			if err := e.admin.CoreV1().Pods("default").Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	hash := Hash(updated)
	e.eventually("a's pod replaced by the new template", func() (bool, string) {
		got := e.podsByNode()
		return got[0] == "a="+hash && got[1] == old[1], fmt.Sprint("pods ", got)
	})
}
