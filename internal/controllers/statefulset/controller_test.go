package statefulset

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/controllertest"
	"github.com/admitd/admitd/pkg/admission"
)

type env struct {
	t     *testing.T
	admin kubernetes.Interface
	deny  *controllertest.DenyPods
}

// start runs an in-process API server (memory storage, no kubelet) with
// namespace "ns" and the controller writing through it as
// statefulset-controller.
func start(t *testing.T) *env {
	t.Helper()
	deny := &controllertest.DenyPods{}
	s := controllertest.Start(t, admission.NamedPlugin{Name: "DenyPods", Plugin: deny})
	client, recorder := s.Controller(User, Component)
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: client, Recorder: recorder, Log: s.Log})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	if _, err := s.Admin.CoreV1().Namespaces().Create(s.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, admin: s.Admin, deny: deny}
}

func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, what, cond)
}

// podNames are the pods of ns as "name:image".
func (e *env) podNames() string {
	e.t.Helper()
	list, err := e.admin.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Name+":"+p.Spec.Containers[0].Image)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// markReady plays the kubelet: every pod of ns becomes Running and Ready.
func (e *env) markReady() {
	e.t.Helper()
	list, err := e.admin.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range list.Items {
		if p.Status.Phase == corev1.PodRunning {
			continue
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		_, _ = e.admin.CoreV1().Pods("ns").UpdateStatus(context.Background(), &p, metav1.UpdateOptions{})
	}
}

// waitPods waits until the pods are want, making them ready meanwhile
// when ready is true.
func (e *env) waitPods(want string, ready bool) {
	e.t.Helper()
	e.eventually("pods "+want, func() (bool, string) {
		if ready {
			e.markReady()
		}
		got := e.podNames()
		return got == want, "pods " + got
	})
}

// waitReady makes the pods ready until the set's status counts n ready
// replicas.
func (e *env) waitReady(n int32) {
	e.t.Helper()
	e.eventually(fmt.Sprint(n, " ready"), func() (bool, string) {
		e.markReady()
		set, err := e.admin.AppsV1().StatefulSets("ns").Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return set.Status.ReadyReplicas == n, fmt.Sprintf("status %+v", set.Status)
	})
}

func (e *env) events() []string {
	list, err := e.admin.CoreV1().Events("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		out = append(out, fmt.Sprintf("%s %s: %s", ev.Type, ev.Reason, strings.TrimPrefix(ev.Message, "(combined from similar events): ")))
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func (e *env) create(set *appsv1.StatefulSet) {
	e.t.Helper()
	set.UID, set.Namespace = "", "ns"
	if _, err := e.admin.AppsV1().StatefulSets("ns").Create(context.Background(), set, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// update changes the set, again on conflicts with the controller's status
// writes.
func (e *env) update(change func(*appsv1.StatefulSet)) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		set, err := e.admin.AppsV1().StatefulSets("ns").Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(set)
		_, err = e.admin.AppsV1().StatefulSets("ns").Update(context.Background(), set, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// OrderedReady: one pod at a time, each once the one before is Running
// and Ready; a scale down deletes from the highest ordinal, one at a time.
func TestOrderedReady(t *testing.T) {
	e := start(t)
	e.create(webSet(3))
	e.waitPods("web-0:nginx", false)
	time.Sleep(300 * time.Millisecond)
	if got := e.podNames(); got != "web-0:nginx" {
		t.Fatalf("before web-0 is ready: pods %s", got)
	}
	e.markReady()
	e.waitPods("web-0:nginx web-1:nginx", false)
	e.waitPods("web-0:nginx web-1:nginx web-2:nginx", true)
	e.waitReady(3) // markReady's status write may have lost a conflict with the controller's pod update
	e.eventually("status", func() (bool, string) {
		set, _ := e.admin.AppsV1().StatefulSets("ns").Get(context.Background(), "web", metav1.GetOptions{})
		s := set.Status
		return s.Replicas == 3 && s.ReadyReplicas == 3 && s.AvailableReplicas == 3 && s.CurrentReplicas == 3 && s.UpdatedReplicas == 3 &&
			s.CurrentRevision == s.UpdateRevision && strings.HasPrefix(s.CurrentRevision, "web-") && s.ObservedGeneration == 1, fmt.Sprintf("%+v", s)
	})
	e.update(func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](1) })
	e.waitPods("web-0:nginx", false)
	want := []string{
		"Normal SuccessfulCreate: Create Claim www-web-0 Pod web-0 in StatefulSet web success",
		"Normal SuccessfulCreate: Create Claim www-web-1 Pod web-1 in StatefulSet web success",
		"Normal SuccessfulCreate: Create Claim www-web-2 Pod web-2 in StatefulSet web success",
		"Normal SuccessfulCreate: Create Pod web-0 in StatefulSet web successful",
		"Normal SuccessfulCreate: Create Pod web-1 in StatefulSet web successful",
		"Normal SuccessfulCreate: Create Pod web-2 in StatefulSet web successful",
		"Normal SuccessfulDelete: Delete Pod web-1 in StatefulSet web successful",
		"Normal SuccessfulDelete: Delete Pod web-2 in StatefulSet web successful",
	}
	e.eventually("events", func() (bool, string) {
		got := e.events()
		return slices.Equal(got, want), fmt.Sprintf("events %q", got)
	})
}

// Parallel: every pod at once, without waiting for readiness; a rolling
// update with partition 1 replaces web-2 and web-1, keeps web-0.
func TestParallelAndPartition(t *testing.T) {
	e := start(t)
	set := webSet(3)
	set.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	e.create(set)
	e.waitPods("web-0:nginx web-1:nginx web-2:nginx", false)
	e.update(func(s *appsv1.StatefulSet) {
		s.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
		s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](1)
	})
	e.waitPods("web-0:nginx web-1:nginx:1.27 web-2:nginx:1.27", true)
	time.Sleep(300 * time.Millisecond)
	e.waitPods("web-0:nginx web-1:nginx:1.27 web-2:nginx:1.27", true)
	revs, err := e.admin.AppsV1().ControllerRevisions("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(revs.Items) != 2 {
		t.Fatalf("revisions: %v, %v", revs, err)
	}
}

// A pod refused by admission is a FailedCreate event with the refusal;
// its claim was created first.
func TestRefusedPodIsFailedCreate(t *testing.T) {
	e := start(t)
	e.deny.On.Store(true)
	e.create(webSet(1))
	want := []string{
		"Normal SuccessfulCreate: Create Claim www-web-0 Pod web-0 in StatefulSet web success",
		`Warning FailedCreate: Create Pod web-0 in StatefulSet web failed error: pods "web-0" is forbidden: pods are refused`,
	}
	e.eventually("events", func() (bool, string) {
		got := e.events()
		return slices.Equal(got, want), fmt.Sprintf("events %q", got)
	})
	e.deny.On.Store(false)
	e.waitPods("web-0:nginx", false)
}

// OnDelete: a template change replaces no pod; a pod deleted by hand
// comes back from the new revision.
func TestOnDelete(t *testing.T) {
	e := start(t)
	set := webSet(2)
	set.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	e.create(set)
	e.waitPods("web-0:nginx web-1:nginx", true)
	e.update(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "nginx:1.27" })
	time.Sleep(500 * time.Millisecond)
	e.waitPods("web-0:nginx web-1:nginx", true)
	if err := e.admin.CoreV1().Pods("ns").Delete(context.Background(), "web-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitPods("web-0:nginx:1.27 web-1:nginx", true)
	e.eventually("status", func() (bool, string) {
		set, _ := e.admin.AppsV1().StatefulSets("ns").Get(context.Background(), "web", metav1.GetOptions{})
		s := set.Status
		return s.CurrentReplicas == 1 && s.UpdatedReplicas == 1 && s.CurrentRevision != s.UpdateRevision, fmt.Sprintf("%+v", s)
	})
}

// With maxUnavailable 2 an OrderedReady rolling update deletes the two
// highest pods of the old revision at once: left unready, web-1 comes back
// new and waits to be ready before web-2 is created (with 1 only web-2
// would have been replaced); made ready, the update completes.
func TestMaxUnavailableRollingUpdate(t *testing.T) {
	e := start(t)
	set := webSet(3)
	set.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstrFromInt(2))
	e.create(set)
	e.waitPods("web-0:nginx web-1:nginx web-2:nginx", true)
	e.waitReady(3)
	e.update(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "nginx:1.27" })
	e.waitPods("web-0:nginx web-1:nginx:1.27", false)
	time.Sleep(300 * time.Millisecond)
	e.waitPods("web-0:nginx web-1:nginx:1.27", false)
	e.waitPods("web-0:nginx:1.27 web-1:nginx:1.27 web-2:nginx:1.27", true)
	e.waitReady(3)
	e.eventually("status", func() (bool, string) {
		set, _ := e.admin.AppsV1().StatefulSets("ns").Get(context.Background(), "web", metav1.GetOptions{})
		s := set.Status
		return s.CurrentReplicas == 3 && s.UpdatedReplicas == 3 && s.CurrentRevision == s.UpdateRevision, fmt.Sprintf("%+v", s)
	})
}

// revisionHistoryLimit 1: after three template changes only the live
// revision and one other remain.
func TestRevisionHistoryLimit(t *testing.T) {
	e := start(t)
	set := webSet(1)
	set.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	e.create(set)
	e.waitPods("web-0:nginx", true)
	for _, image := range []string{"nginx:1", "nginx:2", "nginx:3"} {
		e.update(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = image })
		e.waitPods("web-0:"+image, true)
	}
	e.eventually("two revisions", func() (bool, string) {
		revs, err := e.admin.AppsV1().ControllerRevisions("ns").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var got []string
		for _, r := range revs.Items {
			got = append(got, fmt.Sprint(r.Revision))
		}
		sort.Strings(got)
		return strings.Join(got, ",") == "3,4", "revisions " + strings.Join(got, ",") + "; " + e.revisionsInUse()
	})
}

// revisionsInUse names the revisions web's status and pods hold: what the
// controller keeps as live (for a failure's message).
func (e *env) revisionsInUse() string {
	e.t.Helper()
	set, err := e.admin.AppsV1().StatefulSets("ns").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	pods, err := e.admin.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	out := fmt.Sprintf("status current %s update %s", set.Status.CurrentRevision, set.Status.UpdateRevision)
	for _, p := range pods.Items {
		out += fmt.Sprintf(", pod %s %s", p.Name, p.Labels[appsv1.StatefulSetRevisionLabel])
	}
	return out
}
