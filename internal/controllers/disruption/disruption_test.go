package disruption

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// env is an in-process API server over memory storage running the
// disruption controller on a fake clock, with an admin client.
type env struct {
	t     *testing.T
	admin kubernetes.Interface
	clock *clocktesting.FakeClock
}

const ns = "default"

func start(t *testing.T) *env {
	t.Helper()
	store, cat := memory.New(), registry.NewCatalogue()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	api := apiserver.New(apiserver.Config{Store: store, Catalogue: cat, Admission: admission.NewChain()})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := api.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	client, err := controllers.NewClientset(api.Loopback(User))
	if err != nil {
		t.Fatal(err)
	}
	recorder, err := controllers.NewEventRecorder(ctx, api.Loopback(User), Component, log)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Now())
	c, err := New(Config{Store: store, Catalogue: cat, Client: client, Recorder: recorder, Log: log, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(ctx)
	adminUser := controllers.ControllerUser("admin")
	adminUser.Groups = append(adminUser.Groups, "system:masters")
	admin, err := controllers.NewClientset(api.Loopback(adminUser))
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, admin: admin, clock: clk}
}

// eventually waits for cond, stepping the fake clock by 20 ms at each
// try: the queues' rate limiters delay retries and rechecks on it.
func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	var last string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		e.clock.Step(20 * time.Millisecond)
		var ok bool
		if ok, last = cond(); ok {
			return
		}
	}
	e.t.Fatalf("%s: after 10s %s", what, last)
}

var ctx = context.Background()

func template(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
}

func controllerRef(kind, apiVersion, name string, uid types.UID) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
}

// deployment creates the Deployment app of replicas and its ReplicaSet,
// and returns the ReplicaSet's controller reference for pods.
func (e *env) deployment(app string, replicas int32) []metav1.OwnerReference {
	e.t.Helper()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	d, err := e.admin.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: sel, Template: template(app)}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	rs, err := e.admin.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: app + "-rs",
		OwnerReferences: controllerRef("Deployment", "apps/v1", d.Name, d.UID)},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Selector: sel, Template: template(app)}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return controllerRef("ReplicaSet", "apps/v1", rs.Name, rs.UID)
}

// pod creates a pod labelled app=app with owners, Running and Ready if
// ready.
func (e *env) pod(name, app string, owners []metav1.OwnerReference, ready bool) *corev1.Pod {
	e.t.Helper()
	p, err := e.admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"app": app}, OwnerReferences: owners}, Spec: template(app).Spec}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if !ready {
		return p
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	p, err = e.admin.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) budget(name, app string, minAvailable, maxUnavailable *intstr.IntOrString) {
	e.t.Helper()
	_, err := e.admin.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
}

// summary prints a budget's status as the tests compare it.
func summary(pdb *policyv1.PodDisruptionBudget) string {
	s := pdb.Status
	out := fmt.Sprintf("gen=%d/%d expected=%d desired=%d healthy=%d allowed=%d disrupted=%d", s.ObservedGeneration, pdb.Generation,
		s.ExpectedPods, s.DesiredHealthy, s.CurrentHealthy, s.DisruptionsAllowed, len(s.DisruptedPods))
	if c := apimeta.FindStatusCondition(s.Conditions, policyv1.DisruptionAllowedCondition); c != nil {
		out += fmt.Sprintf(" [%s %s: %s]", c.Status, c.Reason, c.Message)
	}
	return out
}

func (e *env) waitStatus(name string, want ...string) *policyv1.PodDisruptionBudget {
	e.t.Helper()
	var pdb *policyv1.PodDisruptionBudget
	e.eventually("budget "+name+" "+strings.Join(want, " or "), func() (bool, string) {
		var err error
		pdb, err = e.admin.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		got := summary(pdb)
		return slices.Contains(want, got), got
	})
	return pdb
}

// waitSyncFailed waits for the fail-safe status of a budget whose sync
// fails once its pod is seen, rest after "gen=G/1 ": the fail-safe status
// keeps the observed generation, 0, or 1 when a sync before the pod
// reached the controller's cache succeeded (as upstream's would).
func (e *env) waitSyncFailed(name, rest string) {
	e.t.Helper()
	e.waitStatus(name, "gen=0/1 "+rest, "gen=1/1 "+rest)
}

// events are "kind/name type reason: message" of the events, sorted.
func (e *env) events() []string {
	list, err := e.admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
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

func (e *env) waitEvent(want string) {
	e.t.Helper()
	e.eventually("event "+want, func() (bool, string) {
		got := e.events()
		return slices.Contains(got, want), fmt.Sprintf("events %q", got)
	})
}

func TestBudgetsOverDeploymentPods(t *testing.T) {
	e := start(t)
	owner := e.deployment("web", 4)
	for i := range 3 {
		e.pod(fmt.Sprintf("web-%d", i), "web", owner, true)
	}
	e.pod("web-3", "web", owner, false)

	e.budget("min-int", "web", ptr.To(intstr.FromInt32(2)), nil)
	e.waitStatus("min-int", "gen=1/1 expected=4 desired=2 healthy=3 allowed=1 disrupted=0 [True SufficientPods: ]")
	e.budget("min-pct", "web", ptr.To(intstr.FromString("60%")), nil)
	e.waitStatus("min-pct", "gen=1/1 expected=4 desired=3 healthy=3 allowed=0 disrupted=0 [False InsufficientPods: ]")
	e.budget("max-pct", "web", nil, ptr.To(intstr.FromString("30%")))
	e.waitStatus("max-pct", "gen=1/1 expected=4 desired=2 healthy=3 allowed=1 disrupted=0 [True SufficientPods: ]")
	e.budget("max-int", "web", nil, ptr.To(intstr.FromInt32(5)))
	e.waitStatus("max-int", "gen=1/1 expected=4 desired=0 healthy=3 allowed=3 disrupted=0 [True SufficientPods: ]")

	// A pod that more than one budget selects syncs one of them, chosen
	// arbitrarily, and says so.
	p, err := e.admin.CoreV1().Pods(ns).Get(ctx, "web-3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := e.admin.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("a MultiplePodDisruptionBudgets warning", func() (bool, string) {
		got := e.events()
		return slices.ContainsFunc(got, func(ev string) bool {
			return strings.HasPrefix(ev, `Pod/web-3 Warning MultiplePodDisruptionBudgets: Pod "default"/"web-3" matches multiple PodDisruptionBudgets.  Chose "`)
		}), fmt.Sprintf("events %q", got)
	})

	// Scaling the Deployment moves the percentages; a spec change the
	// observed generation.
	for _, name := range []string{"min-int", "max-pct", "max-int"} {
		if err := e.admin.PolicyV1().PodDisruptionBudgets(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.admin.AppsV1().Deployments(ns).Patch(ctx, "web", "application/merge-patch+json",
		[]byte(`{"spec":{"replicas":10}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.PolicyV1().PodDisruptionBudgets(ns).Patch(ctx, "min-pct", "application/merge-patch+json",
		[]byte(`{"spec":{"minAvailable":"10%"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// The controller reads the scale from its Deployment cache, which may
	// see the new replicas after the budget's update (as kcm's informers
	// may): a later event of the budget syncs it again.
	want := "gen=2/2 expected=10 desired=1 healthy=4 allowed=3 disrupted=0 [True SufficientPods: ]"
	touches := 0
	e.eventually("budget min-pct "+want, func() (bool, string) {
		pdb, err := e.admin.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "min-pct", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if got := summary(pdb); got != want {
			touches++
			_, err := e.admin.PolicyV1().PodDisruptionBudgets(ns).Patch(ctx, "min-pct", "application/merge-patch+json",
				fmt.Appendf(nil, `{"metadata":{"annotations":{"touch":"%d"}}}`, touches), metav1.PatchOptions{})
			return false, fmt.Sprint(got, err)
		}
		return true, ""
	})
}

func TestBudgetsOverOtherControllers(t *testing.T) {
	e := start(t)
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "rs"}}
	rs, err := e.admin.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Selector: sel, Template: template("rs")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.pod("rs-0", "rs", controllerRef("ReplicaSet", "apps/v1", rs.Name, rs.UID), true)
	ss, err := e.admin.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "ss"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](5), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ss"}},
			Template: template("ss")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.pod("ss-0", "ss", controllerRef("StatefulSet", "apps/v1", ss.Name, ss.UID), true)
	rc, err := e.admin.CoreV1().ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc"},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](7), Selector: map[string]string{"app": "rc"},
			Template: ptr.To(template("rc"))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.pod("rc-0", "rc", controllerRef("ReplicationController", "v1", rc.Name, rc.UID), true)
	for _, app := range []string{"rs", "ss", "rc"} {
		e.budget(app, app, nil, ptr.To(intstr.FromInt32(1)))
	}
	e.waitStatus("rs", "gen=1/1 expected=3 desired=2 healthy=1 allowed=0 disrupted=0 [False InsufficientPods: ]")
	e.waitStatus("ss", "gen=1/1 expected=5 desired=4 healthy=1 allowed=0 disrupted=0 [False InsufficientPods: ]")
	e.waitStatus("rc", "gen=1/1 expected=7 desired=6 healthy=1 allowed=0 disrupted=0 [False InsufficientPods: ]")
}

func TestBudgetsThatCannotCount(t *testing.T) {
	e := start(t)
	e.budget("none", "none", ptr.To(intstr.FromInt32(1)), nil)
	e.waitStatus("none", "gen=1/1 expected=0 desired=1 healthy=0 allowed=0 disrupted=0 [False InsufficientPods: ]")
	e.waitEvent("PodDisruptionBudget/none Normal NoPods: No matching pods found")

	// Unmanaged pods count for an integer minAvailable and not for a
	// percentage or maxUnavailable, which warn.
	e.pod("lone", "lone", nil, true)
	e.budget("lone", "lone", nil, ptr.To(intstr.FromInt32(1)))
	e.waitStatus("lone", "gen=1/1 expected=0 desired=0 healthy=1 allowed=0 disrupted=0 [False InsufficientPods: ]")
	e.waitEvent(`PodDisruptionBudget/lone Warning UnmanagedPods: Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{app: lone,},MatchExpressions:[]LabelSelectorRequirement{},}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`)

	// A controller without a scale subresource fails the sync: the
	// fail-safe status allows nothing and says why, and the eviction
	// subresource repeats it.
	cm, err := e.admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.pod("owned", "owned", controllerRef("ConfigMap", "v1", cm.Name, cm.UID), true)
	e.budget("owned", "owned", ptr.To(intstr.FromString("50%")), nil)
	e.waitSyncFailed("owned", "expected=0 desired=0 healthy=0 allowed=0 disrupted=0 [False SyncFailed: configmaps does not implement the scale subresource]")
	e.waitEvent("PodDisruptionBudget/owned Warning CalculateExpectedPodCountFailed: Failed to calculate the number of expected pods: configmaps does not implement the scale subresource")

	// An owner of an unknown kind, or one that is gone, is no controller.
	e.pod("foo", "foo", controllerRef("Foo", "example.com/v1", "foo", cm.UID), true)
	e.budget("foo", "foo", nil, ptr.To(intstr.FromInt32(1)))
	e.waitSyncFailed("foo", `expected=0 desired=0 healthy=0 allowed=0 disrupted=0 [False SyncFailed: no matches for kind "Foo" in version "example.com/v1"]`)
	e.pod("orphan", "orphan", controllerRef("ReplicaSet", "apps/v1", "gone", cm.UID), true)
	e.budget("orphan", "orphan", nil, ptr.To(intstr.FromInt32(1)))
	e.waitSyncFailed("orphan", `expected=0 desired=0 healthy=0 allowed=0 disrupted=0 [False SyncFailed: found no controllers for pod "orphan"]`)
}

func TestEvictionsAndDisruptedPods(t *testing.T) {
	e := start(t)
	owner := e.deployment("web", 3)
	for i := range 3 {
		e.pod(fmt.Sprintf("web-%d", i), "web", owner, true)
	}
	e.budget("web", "web", ptr.To(intstr.FromInt32(2)), nil)
	e.waitStatus("web", "gen=1/1 expected=3 desired=2 healthy=3 allowed=1 disrupted=0 [True SufficientPods: ]")

	evict := func(pod string) error {
		return e.admin.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns}})
	}
	if err := evict("web-0"); err != nil {
		t.Fatal(err)
	}
	// The pod is gone: the controller drops it from disruptedPods.
	e.waitStatus("web", "gen=1/1 expected=2 desired=2 healthy=2 allowed=0 disrupted=0 [False InsufficientPods: ]")
	err := evict("web-1")
	if err == nil || !strings.Contains(err.Error(), "Cannot evict pod as it would violate the pod's disruption budget.") {
		t.Fatalf("second eviction = %v, want a 429", err)
	}

	// A pod recorded as disrupted but not deleted counts as unhealthy for
	// DeletionTimeout, then is dropped with a NotDeleted warning.
	e.pod("web-3", "web", owner, true)
	e.waitStatus("web", "gen=1/1 expected=3 desired=2 healthy=3 allowed=1 disrupted=0 [True SufficientPods: ]")
	pdb, err := e.admin.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdb.Status.DisruptedPods = map[string]metav1.Time{"web-3": metav1.NewTime(e.clock.Now())}
	pdb.Status.DisruptionsAllowed = 0
	if _, err := e.admin.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitStatus("web", "gen=1/1 expected=3 desired=2 healthy=2 allowed=0 disrupted=1 [False InsufficientPods: ]")
	time.Sleep(100 * time.Millisecond) // the controller has queued its recheck
	e.clock.Step(DeletionTimeout + time.Second)
	e.waitStatus("web", "gen=1/1 expected=3 desired=2 healthy=3 allowed=1 disrupted=0 [True SufficientPods: ]")
	e.waitEvent("Pod/web-3 Warning NotDeleted: Pod was expected by PDB default/default to be deleted but it wasn't")
}

func TestStaleDisruptionTargetIsReset(t *testing.T) {
	e := start(t)
	p := e.pod("p", "p", nil, true)
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: metav1.NewTime(e.clock.Now())})
	kubelet := e.pod("k", "k", nil, true)
	kubelet.Status.Conditions = append(kubelet.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: corev1.PodReasonTerminationByKubelet, LastTransitionTime: metav1.NewTime(e.clock.Now())})
	for _, pod := range []*corev1.Pod{p, kubelet} {
		if _, err := e.admin.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	condition := func(name string) string {
		pod, err := e.admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := podCondition(pod, corev1.DisruptionTarget)
		return fmt.Sprintf("%s %s %q gen=%d", c.Status, c.Reason, c.Message, c.ObservedGeneration)
	}
	time.Sleep(200 * time.Millisecond)
	if got := condition("p"); got != `True EvictionByEvictionAPI "Eviction API: evicting" gen=0` {
		t.Fatalf("before the timeout: %s", got)
	}
	e.clock.Step(StalePodDisruptionTimeout)
	e.eventually("the condition reset", func() (bool, string) {
		got := condition("p")
		return got == `False  "" gen=1`, got
	})
	if got := condition("k"); got != `True TerminationByKubelet "" gen=0` {
		t.Errorf("the kubelet's condition = %s, want it kept", got)
	}
}
