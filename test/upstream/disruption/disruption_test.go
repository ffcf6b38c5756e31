// Package disruption compares admitd's disruption controller
// (internal/controllers/disruption) with upstream's
// (pkg/controller/disruption): the status each writes for the same
// generated budgets, pods and controllers.
package disruption

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	scalefake "k8s.io/client-go/scale/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/controller/disruption"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	ours "github.com/admitd/admitd/internal/controllers/disruption"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// owner kinds a generated group of pods can have.
const (
	ownerDeployment = iota
	ownerReplicaSet
	ownerStatefulSet
	ownerReplicationController
	ownerNone
	ownerMissingReplicaSet
	ownerWrongUID
	ownerConfigMap
	ownerKinds
)

// group is a controller and its pods.
type group struct {
	kind     int
	name     string
	replicas int32
	pods     []podSpec
}

type podSpec struct {
	name     string
	ready    *bool // nil: no Ready condition
	phase    corev1.PodPhase
	deleting bool
}

// scenario is one namespace: a budget over the groups' pods (all labelled
// app=x), with a status already naming disrupted pods.
type scenario struct {
	ns        string
	min, max  *intstr.IntOrString
	groups    []group
	disrupted map[string]metav1.Time
}

func randomScenario(r *rand.Rand, i int, now time.Time) scenario {
	sc := scenario{ns: fmt.Sprintf("ns%d", i), disrupted: map[string]metav1.Time{}}
	amount := func() *intstr.IntOrString {
		if r.IntN(2) == 0 {
			return ptr.To(intstr.FromInt32(int32(r.IntN(7))))
		}
		return ptr.To(intstr.FromString([]string{"0%", "10%", "33%", "50%", "66%", "100%"}[r.IntN(6)]))
	}
	switch r.IntN(5) {
	case 0, 1:
		sc.min = amount()
	case 2, 3:
		sc.max = amount()
	}
	for g := range r.IntN(3) {
		gr := group{kind: r.IntN(ownerKinds), name: fmt.Sprintf("c%d", g), replicas: int32(r.IntN(7))}
		if r.IntN(4) > 0 && gr.kind >= ownerMissingReplicaSet { // fewer failing syncs
			gr.kind = r.IntN(ownerNone + 1)
		}
		for p := range r.IntN(5) {
			ps := podSpec{name: fmt.Sprintf("%s-p%d", gr.name, p), phase: corev1.PodRunning, deleting: r.IntN(6) == 0}
			if r.IntN(5) > 0 {
				ps.ready = ptr.To(r.IntN(4) > 0)
			}
			if r.IntN(8) == 0 {
				ps.phase = []corev1.PodPhase{corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed}[r.IntN(3)]
			}
			gr.pods = append(gr.pods, ps)
			if r.IntN(4) == 0 {
				sc.disrupted[ps.name] = metav1.NewTime(now.Add(-[]time.Duration{time.Minute, 3 * time.Minute}[r.IntN(2)]))
			}
		}
		sc.groups = append(sc.groups, gr)
	}
	if r.IntN(3) == 0 {
		sc.disrupted["gone"] = metav1.NewTime(now.Add(-time.Minute))
	}
	return sc
}

// objects are the scenario's objects; uidOf gives the UIDs of the
// objects already created (for owner references), and is asked for
// "configmap/<name>" too.
type objects struct {
	pdb          *policyv1.PodDisruptionBudget
	configMaps   []*corev1.ConfigMap
	deployments  []*appsv1.Deployment
	replicaSets  []*appsv1.ReplicaSet // each after its Deployment, if any
	statefulSets []*appsv1.StatefulSet
	rcs          []*corev1.ReplicationController
}

var labels = map[string]string{"app": "x"}

func template() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
}

func controllerRef(apiVersion, kind, name string, uid types.UID) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
}

// controllers are the scenario's controller objects, without owner
// references to one another (deploymentOwner gives those).
func (sc scenario) controllers() objects {
	o := objects{pdb: &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb", Namespace: sc.ns, Generation: 1},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: sc.min, MaxUnavailable: sc.max, Selector: &metav1.LabelSelector{MatchLabels: labels}}}}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	for _, g := range sc.groups {
		meta := metav1.ObjectMeta{Name: g.name, Namespace: sc.ns}
		switch g.kind {
		case ownerDeployment:
			o.deployments = append(o.deployments, &appsv1.Deployment{ObjectMeta: meta,
				Spec: appsv1.DeploymentSpec{Replicas: ptr.To(g.replicas), Selector: sel, Template: template()}})
			rsMeta := meta
			rsMeta.Name += "-rs"
			o.replicaSets = append(o.replicaSets, &appsv1.ReplicaSet{ObjectMeta: rsMeta,
				Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(g.replicas + 1), Selector: sel, Template: template()}})
		case ownerReplicaSet, ownerWrongUID:
			o.replicaSets = append(o.replicaSets, &appsv1.ReplicaSet{ObjectMeta: meta,
				Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(g.replicas), Selector: sel, Template: template()}})
		case ownerStatefulSet:
			o.statefulSets = append(o.statefulSets, &appsv1.StatefulSet{ObjectMeta: meta,
				Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(g.replicas), Selector: sel, Template: template()}})
		case ownerReplicationController:
			o.rcs = append(o.rcs, &corev1.ReplicationController{ObjectMeta: meta,
				Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To(g.replicas), Selector: labels, Template: ptr.To(template())}})
		case ownerConfigMap:
			o.configMaps = append(o.configMaps, &corev1.ConfigMap{ObjectMeta: meta})
		}
	}
	return o
}

// pods are the scenario's pods, owned through uid (the UID of an
// object by kind/name).
func (sc scenario) pods(uid func(kind, name string) types.UID) []*corev1.Pod {
	var out []*corev1.Pod
	for _, g := range sc.groups {
		var owners []metav1.OwnerReference
		switch g.kind {
		case ownerDeployment:
			owners = controllerRef("apps/v1", "ReplicaSet", g.name+"-rs", uid("ReplicaSet", g.name+"-rs"))
		case ownerReplicaSet:
			owners = controllerRef("apps/v1", "ReplicaSet", g.name, uid("ReplicaSet", g.name))
		case ownerWrongUID:
			owners = controllerRef("apps/v1", "ReplicaSet", g.name, "not-its-uid")
		case ownerMissingReplicaSet:
			owners = controllerRef("apps/v1", "ReplicaSet", g.name+"-missing", "missing-uid")
		case ownerStatefulSet:
			owners = controllerRef("apps/v1", "StatefulSet", g.name, uid("StatefulSet", g.name))
		case ownerReplicationController:
			owners = controllerRef("v1", "ReplicationController", g.name, uid("ReplicationController", g.name))
		case ownerConfigMap:
			owners = controllerRef("v1", "ConfigMap", g.name, uid("ConfigMap", g.name))
		}
		for _, ps := range g.pods {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: ps.name, Namespace: sc.ns, Labels: labels, OwnerReferences: owners},
				Spec: template().Spec, Status: corev1.PodStatus{Phase: ps.phase}}
			if ps.ready != nil {
				st := corev1.ConditionFalse
				if *ps.ready {
					st = corev1.ConditionTrue
				}
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
			}
			if ps.deleting {
				p.Finalizers = []string{"example.com/keep"}
			}
			out = append(out, p)
		}
	}
	return out
}

func (sc scenario) deleting(pod string) bool {
	for _, g := range sc.groups {
		for _, p := range g.pods {
			if p.name == pod {
				return p.deleting
			}
		}
	}
	return false
}

// budgetStatus is what the tests compare: the status without the
// condition's transition time.
func budgetStatus(pdb *policyv1.PodDisruptionBudget) policyv1.PodDisruptionBudgetStatus {
	s := *pdb.Status.DeepCopy()
	for i := range s.Conditions {
		s.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	if len(s.DisruptedPods) == 0 {
		s.DisruptedPods = nil
	}
	for i, c := range s.Conditions {
		s.Conditions[i].Message = anyPod.ReplaceAllString(c.Message, `<a pod's controller error>`)
	}
	return s
}

// anyPod is the error of the first of the budget's pods whose controller
// cannot give a scale (none found, or a kind without the scale
// subresource), in the order of the controller's cache, which is a map's
// on both sides: which pod, and so which of the two errors, varies.
var anyPod = regexp.MustCompile(`found no controllers for pod "[^"]*"|\S+ does not implement the scale subresource`)

func synced(pdb *policyv1.PodDisruptionBudget) bool {
	return apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition) != nil
}

// waitStatuses waits until every scenario's budget has a
// DisruptionAllowed condition, then 300 ms more, and returns their
// statuses by namespace.
func waitStatuses(t *testing.T, c kubernetes.Interface, scs []scenario) map[string]policyv1.PodDisruptionBudgetStatus {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		list, err := c.PolicyV1().PodDisruptionBudgets("").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for i := range list.Items {
			if synced(&list.Items[i]) {
				done++
			}
		}
		if done == len(scs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d budgets synced after 60s", done, len(scs))
		}
	}
	time.Sleep(300 * time.Millisecond)
	list, err := c.PolicyV1().PodDisruptionBudgets("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]policyv1.PodDisruptionBudgetStatus{}
	for i := range list.Items {
		out[list.Items[i].Namespace] = budgetStatus(&list.Items[i])
	}
	return out
}

// runUpstream runs upstream's controller over a fake clientset holding
// every scenario, with a REST mapper of the owner kinds, a scale client
// that finds nothing and discovery listing the scale subresources.
func runUpstream(t *testing.T, scs []scenario) map[string]policyv1.PodDisruptionBudgetStatus {
	var objs []runtime.Object
	for _, sc := range scs {
		o := sc.controllers()
		pdb := o.pdb.DeepCopy()
		pdb.Status.DisruptedPods = sc.disrupted
		objs = append(objs, pdb)
		uid := func(kind, name string) types.UID { return types.UID(sc.ns + "/" + kind + "/" + name) }
		for _, cm := range o.configMaps {
			cm.UID = uid("ConfigMap", cm.Name)
			objs = append(objs, cm)
		}
		for _, d := range o.deployments {
			d.UID = uid("Deployment", d.Name)
			objs = append(objs, d)
		}
		for _, rs := range o.replicaSets {
			rs.UID = uid("ReplicaSet", rs.Name)
			if d, ok := deploymentOf(o, rs); ok {
				rs.OwnerReferences = controllerRef("apps/v1", "Deployment", d.Name, d.UID)
			}
			objs = append(objs, rs)
		}
		for _, ss := range o.statefulSets {
			ss.UID = uid("StatefulSet", ss.Name)
			objs = append(objs, ss)
		}
		for _, rc := range o.rcs {
			rc.UID = uid("ReplicationController", rc.Name)
			objs = append(objs, rc)
		}
		for _, p := range sc.pods(uid) {
			if sc.deleting(p.Name) {
				p.DeletionTimestamp = ptr.To(metav1.Now())
			}
			objs = append(objs, p)
		}
	}
	client := fake.NewClientset(objs...)
	client.Resources = discoveryLists()
	scales := &scalefake.FakeScaleClient{}
	scales.AddReactor("get", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(a.GetResource().GroupResource(), "")
	})
	mapper := apimeta.NewDefaultRESTMapper(nil)
	for _, gvk := range []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment"), appsv1.SchemeGroupVersion.WithKind("ReplicaSet"),
		appsv1.SchemeGroupVersion.WithKind("StatefulSet"), corev1.SchemeGroupVersion.WithKind("ReplicationController"),
		corev1.SchemeGroupVersion.WithKind("ConfigMap")} {
		mapper.Add(gvk, apimeta.RESTScopeNamespace)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f := informers.NewSharedInformerFactory(client, 0)
	dc := disruption.NewDisruptionController(ctx, f.Core().V1().Pods(), f.Policy().V1().PodDisruptionBudgets(),
		f.Core().V1().ReplicationControllers(), f.Apps().V1().ReplicaSets(), f.Apps().V1().Deployments(),
		f.Apps().V1().StatefulSets(), client, mapper, scales, client.Discovery())
	f.Start(ctx.Done())
	go dc.Run(ctx, 1)
	return waitStatuses(t, client, scs)
}

func deploymentOf(o objects, rs *appsv1.ReplicaSet) (*appsv1.Deployment, bool) {
	for _, d := range o.deployments {
		if d.Name+"-rs" == rs.Name {
			return d, true
		}
	}
	return nil, false
}

// discoveryLists are the resources the fake discovery serves: apps/v1's
// and core's owner kinds, with scale subresources as kube-apiserver's.
func discoveryLists() []*metav1.APIResourceList {
	scale := func(resource string) metav1.APIResource {
		return metav1.APIResource{Name: resource + "/scale", Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale"}
	}
	return []*metav1.APIResourceList{
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "replicasets", Namespaced: true, Kind: "ReplicaSet"}, scale("replicasets"),
			{Name: "deployments", Namespaced: true, Kind: "Deployment"}, scale("deployments"),
			{Name: "statefulsets", Namespaced: true, Kind: "StatefulSet"}, scale("statefulsets")}},
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "configmaps", Namespaced: true, Kind: "ConfigMap"},
			{Name: "replicationcontrollers", Namespaced: true, Kind: "ReplicationController"}, scale("replicationcontrollers")}},
	}
}

// runOurs creates every scenario through an in-process API server, then
// runs admitd's controller.
func runOurs(t *testing.T, scs []scenario) map[string]policyv1.PodDisruptionBudgetStatus {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	store, cat := memory.New(), registry.NewCatalogue()
	api := apiserver.New(apiserver.Config{Store: store, Catalogue: cat, Admission: admission.NewChain()})
	if err := api.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	adminUser := controllers.ControllerUser("admin")
	adminUser.Groups = append(adminUser.Groups, "system:masters")
	c, err := controllers.NewClientset(api.Loopback(adminUser))
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scs {
		createScenario(t, c, sc)
	}
	client, err := controllers.NewClientset(api.Loopback(ours.User))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	recorder, err := controllers.NewEventRecorder(ctx, api.Loopback(ours.User), ours.Component, log)
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := ours.New(ours.Config{Store: store, Catalogue: cat, Client: client, Recorder: recorder, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	go ctrl.Run(ctx)
	return waitStatuses(t, c, scs)
}

// created is the UID of what a create returned, failing the test on an
// error.
func created[T metav1.Object](t *testing.T, obj T, err error) types.UID {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return obj.GetUID()
}

func createScenario(t *testing.T, c kubernetes.Interface, sc scenario) {
	ctx := t.Context()
	ns, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sc.ns}}, metav1.CreateOptions{})
	created(t, ns, err)
	o := sc.controllers()
	uids := map[string]types.UID{}
	for _, cm := range o.configMaps {
		obj, err := c.CoreV1().ConfigMaps(sc.ns).Create(ctx, cm, metav1.CreateOptions{})
		uids["ConfigMap/"+cm.Name] = created(t, obj, err)
	}
	for _, d := range o.deployments {
		obj, err := c.AppsV1().Deployments(sc.ns).Create(ctx, d, metav1.CreateOptions{})
		uids["Deployment/"+d.Name] = created(t, obj, err)
	}
	for _, rs := range o.replicaSets {
		if d, ok := deploymentOf(o, rs); ok {
			rs.OwnerReferences = controllerRef("apps/v1", "Deployment", d.Name, uids["Deployment/"+d.Name])
		}
		obj, err := c.AppsV1().ReplicaSets(sc.ns).Create(ctx, rs, metav1.CreateOptions{})
		uids["ReplicaSet/"+rs.Name] = created(t, obj, err)
	}
	for _, ss := range o.statefulSets {
		obj, err := c.AppsV1().StatefulSets(sc.ns).Create(ctx, ss, metav1.CreateOptions{})
		uids["StatefulSet/"+ss.Name] = created(t, obj, err)
	}
	for _, rc := range o.rcs {
		obj, err := c.CoreV1().ReplicationControllers(sc.ns).Create(ctx, rc, metav1.CreateOptions{})
		uids["ReplicationController/"+rc.Name] = created(t, obj, err)
	}
	for _, p := range sc.pods(func(kind, name string) types.UID { return uids[kind+"/"+name] }) {
		obj, err := c.CoreV1().Pods(sc.ns).Create(ctx, p, metav1.CreateOptions{})
		created(t, obj, err)
		obj.Status = p.Status
		obj, err = c.CoreV1().Pods(sc.ns).UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		created(t, obj, err)
		if sc.deleting(p.Name) {
			if err := c.CoreV1().Pods(sc.ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	pdb, err := c.PolicyV1().PodDisruptionBudgets(sc.ns).Create(ctx, o.pdb, metav1.CreateOptions{})
	created(t, pdb, err)
	pdb.Status.DisruptedPods = sc.disrupted
	pdb, err = c.PolicyV1().PodDisruptionBudgets(sc.ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{})
	created(t, pdb, err)
}

// TestStatusMatchesUpstream: upstream's controller and ours write the
// same status (counts, disrupted pods kept or expired, observed
// generation, DisruptionAllowed condition, SyncFailed messages) for 300
// generated budgets over pods of Deployments, ReplicaSets, StatefulSets,
// ReplicationControllers, no controller, missing controllers, a
// controller of another UID and a ConfigMap (no scale subresource).
func TestStatusMatchesUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 1))
	now := time.Now().Truncate(time.Second)
	var scs []scenario
	for i := range 300 {
		scs = append(scs, randomScenario(r, i, now))
	}
	want := runUpstream(t, scs)
	got := runOurs(t, scs)
	mismatches, failed, allowing := 0, 0, 0
	for _, sc := range scs {
		w, g := want[sc.ns], got[sc.ns]
		if c := apimeta.FindStatusCondition(w.Conditions, policyv1.DisruptionAllowedCondition); c != nil && c.Reason == policyv1.SyncFailedReason {
			failed++
		}
		if w.DisruptionsAllowed > 0 {
			allowing++
		}
		if d := cmp.Diff(w, g); d != "" {
			mismatches++
			if mismatches <= 3 {
				t.Errorf("%s %+v: status differs (-upstream +ours):\n%s", sc.ns, sc, d)
			}
		}
	}
	t.Logf("%d budgets: %d failed sync, %d allow disruptions", len(scs), failed, allowing)
	if mismatches > 0 {
		t.Errorf("%d of %d differ", mismatches, len(scs))
	}
	if failed == 0 || allowing == 0 {
		t.Error("no budget failed to sync, or none allowed a disruption: the generator misses cases")
	}
}
