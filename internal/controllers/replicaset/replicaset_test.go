package replicaset

import (
	"context"
	"fmt"
	"regexp"
	"slices"
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
	"github.com/admitd/admitd/pkg/admission"
)

// env is an in-process API server over memory storage with one
// controller of kind running, and an admin client.
type env struct {
	t     *testing.T
	admin kubernetes.Interface
	deny  *controllertest.DenyPods
}

func start(t *testing.T, kind Kind) *env {
	t.Helper()
	deny := &controllertest.DenyPods{}
	s := controllertest.Start(t, admission.NamedPlugin{Name: "DenyPods", Plugin: deny})
	client, recorder := s.Controller(kind.User, kind.Component)
	c, err := New(Config{Kind: kind, Store: s.Store, Catalogue: s.Catalogue, Client: client, Recorder: recorder, Log: s.Log})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	return &env{t: t, admin: s.Admin, deny: deny}
}

func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, what, cond)
}

func (e *env) pods(ns string) []corev1.Pod {
	e.t.Helper()
	list, err := e.admin.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}

// activePods are the pods of ns not being deleted.
func (e *env) activePods(ns string) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range e.pods(ns) {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// events are the "reason: message" of the events about name in ns.
func (e *env) events(ns, name string) []string {
	e.t.Helper()
	list, err := e.admin.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == name {
			out = append(out, fmt.Sprintf("%s %s: %s", ev.Type, ev.Reason, ev.Message))
		}
	}
	sort.Strings(out)
	return out
}

func replicaSet(name string, replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.ReplicaSetSpec{
		Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"note": "kept"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
}

func (e *env) getRS(name string) *appsv1.ReplicaSet {
	e.t.Helper()
	rs, err := e.admin.AppsV1().ReplicaSets("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return rs
}

// A ReplicaSet gets its pods from its template, named after it and
// controlled by it, with a SuccessfulCreate event each and its status
// counted; scaled down, it deletes the surplus (not-ready first) with
// SuccessfulDelete events.
func TestReplicaSetCreatesAndDeletesPods(t *testing.T) {
	e := start(t, ReplicaSets)
	ctx := context.Background()
	rs, err := e.admin.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("web", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.eventually("3 pods and status.replicas 3", func() (bool, string) {
		got := e.getRS("web").Status
		return len(e.pods("default")) == 3 && got.Replicas == 3 && got.FullyLabeledReplicas == 3 && got.ObservedGeneration == 1,
			fmt.Sprintf("%d pods, status %+v", len(e.pods("default")), got)
	})
	for _, p := range e.pods("default") {
		ref := metav1.GetControllerOf(&p)
		if !strings.HasPrefix(p.Name, "web-") || p.GenerateName != "web-" || p.Labels["app"] != "web" || p.Annotations["note"] != "kept" ||
			ref == nil || ref.UID != rs.UID || ref.Kind != "ReplicaSet" || ref.APIVersion != "apps/v1" || !*ref.BlockOwnerDeletion {
			t.Errorf("pod %s: generateName %q labels %v annotations %v controller %+v", p.Name, p.GenerateName, p.Labels, p.Annotations, ref)
		}
	}
	if got := e.getRS("web").Status.TerminatingReplicas; got == nil || *got != 0 {
		t.Errorf("status.terminatingReplicas = %v, want 0", got)
	}
	e.eventually("3 SuccessfulCreate events", func() (bool, string) {
		evs := e.events("default", "web")
		want := 0
		for _, p := range e.pods("default") {
			if slices.Contains(evs, "Normal SuccessfulCreate: Created pod: "+p.Name) {
				want++
			}
		}
		return want == 3, fmt.Sprint(evs)
	})

	pods := e.pods("default")
	ready := pods[0]
	ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	if _, err := e.admin.CoreV1().Pods("default").UpdateStatus(ctx, &ready, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("1 ready and available", func() (bool, string) {
		got := e.getRS("web").Status
		return got.ReadyReplicas == 1 && got.AvailableReplicas == 1, fmt.Sprintf("%+v", got)
	})

	if _, err := e.admin.AppsV1().ReplicaSets("default").Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the ready pod is the one kept", func() (bool, string) {
		left := e.activePods("default")
		return len(left) == 1 && left[0].Name == ready.Name, fmt.Sprint(len(left), " pods left")
	})
	e.eventually("2 SuccessfulDelete events and status.replicas 1", func() (bool, string) {
		evs := e.events("default", "web")
		n := 0
		for _, ev := range evs {
			if strings.HasPrefix(ev, "Normal SuccessfulDelete: Deleted pod: web-") {
				n++
			}
		}
		return n == 2 && e.getRS("web").Status.Replicas == 1 && e.getRS("web").Status.ObservedGeneration == 2, fmt.Sprint(evs)
	})
}

// A refused create leaves a FailedCreate event with the server's error and
// the ReplicaFailure condition; once creates are allowed the retry creates
// the pods and removes the condition.
func TestReplicaSetFailedCreate(t *testing.T) {
	e := start(t, ReplicaSets)
	e.deny.On.Store(true)
	ctx := context.Background()
	if _, err := e.admin.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("web", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The server names the pod before validating admission refuses it.
	refusal := regexp.MustCompile(`^pods "web-[a-z0-9]{5}" is forbidden: pods are refused$`)
	e.eventually("the ReplicaFailure condition", func() (bool, string) {
		c := condition(e.getRS("web").Status, appsv1.ReplicaSetReplicaFailure)
		return c != nil && c.Status == corev1.ConditionTrue && c.Reason == "FailedCreate" && refusal.MatchString(c.Message), fmt.Sprintf("%+v", c)
	})
	e.eventually("a FailedCreate event", func() (bool, string) {
		evs := e.events("default", "web")
		return slices.ContainsFunc(evs, func(ev string) bool {
			msg, ok := strings.CutPrefix(ev, "Warning FailedCreate: Error creating: ")
			return ok && refusal.MatchString(msg)
		}), fmt.Sprint(evs)
	})
	if n := len(e.pods("default")); n != 0 {
		t.Errorf("%d pods despite the refusal", n)
	}
	e.deny.On.Store(false)
	e.eventually("3 pods and no ReplicaFailure", func() (bool, string) {
		st := e.getRS("web").Status
		return len(e.pods("default")) == 3 && st.Replicas == 3 && len(st.Conditions) == 0, fmt.Sprintf("%+v", st)
	})
}

// An orphan the selector matches is adopted (and counted); a pod whose
// labels stop matching is released and replaced.
func TestReplicaSetAdoptsAndReleases(t *testing.T) {
	e := start(t, ReplicaSets)
	ctx := context.Background()
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	if _, err := e.admin.CoreV1().Pods("default").Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rs, err := e.admin.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("web", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.eventually("the orphan adopted and one pod created", func() (bool, string) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "orphan", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ref := metav1.GetControllerOf(p)
		return ref != nil && ref.UID == rs.UID && len(e.pods("default")) == 2, fmt.Sprintf("controller %+v, %d pods", ref, len(e.pods("default")))
	})
	if _, err := e.admin.CoreV1().Pods("default").Patch(ctx, "orphan", types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"other"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the pod released and replaced", func() (bool, string) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "orphan", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(p.OwnerReferences) == 0 && len(e.pods("default")) == 3 && e.getRS("web").Status.Replicas == 2,
			fmt.Sprintf("owners %+v, %d pods", p.OwnerReferences, len(e.pods("default")))
	})
}

// A ReplicationController gets its pods, controlled by it, with events
// about it from replication-controller, and its status without
// terminatingReplicas.
func TestReplicationController(t *testing.T) {
	e := start(t, ReplicationControllers)
	ctx := context.Background()
	rs := replicaSet("legacy", 2)
	rc := &corev1.ReplicationController{ObjectMeta: rs.ObjectMeta, Spec: corev1.ReplicationControllerSpec{
		Replicas: rs.Spec.Replicas, Selector: rs.Spec.Selector.MatchLabels, Template: &rs.Spec.Template}}
	created, err := e.admin.CoreV1().ReplicationControllers("default").Create(ctx, rc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.eventually("2 pods and status.replicas 2", func() (bool, string) {
		got, err := e.admin.CoreV1().ReplicationControllers("default").Get(ctx, "legacy", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(e.pods("default")) == 2 && got.Status.Replicas == 2 && got.Status.ObservedGeneration == 1, fmt.Sprintf("%+v", got.Status)
	})
	for _, p := range e.pods("default") {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || ref.UID != created.UID || ref.Kind != "ReplicationController" || ref.APIVersion != "v1" || p.GenerateName != "legacy-" {
			t.Errorf("pod %s: generateName %q controller %+v", p.Name, p.GenerateName, ref)
		}
	}
	e.eventually("2 SuccessfulCreate events", func() (bool, string) {
		evs := e.events("default", "legacy")
		return len(evs) == 2 && strings.HasPrefix(evs[0], "Normal SuccessfulCreate: Created pod: legacy-"), fmt.Sprint(evs)
	})
	list, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range list.Items {
		if ev.InvolvedObject.Kind != "ReplicationController" || ev.InvolvedObject.APIVersion != "v1" || ev.Source.Component != "replication-controller" {
			t.Errorf("event %s about %+v from %q", ev.Reason, ev.InvolvedObject, ev.Source.Component)
		}
	}
}
