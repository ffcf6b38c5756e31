package replicaset

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	ours "github.com/admitd/admitd/internal/controllers/replicaset"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// scenario is a ReplicaSet and the pods that exist when it is created.
type scenario struct {
	name string
	rs   *appsv1.ReplicaSet
	pods []*corev1.Pod
}

// outcome is what a controller made of a scenario, normalized: the pods
// left (given ones by name, created ones as "<generateName>*" with their
// labels and controller), the status (condition times dropped) and the
// events (generated names replaced).
type outcome struct {
	Pods   []string
	Status appsv1.ReplicaSetStatus
	Events []string
}

var generated = regexp.MustCompile(`\bweb-[a-z0-9]{5}\b`)

func labelsOf(p *corev1.Pod) string {
	var kv []string
	for k, v := range p.Labels {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// observe reads the outcome through c once it stops changing.
func observe(t *testing.T, c kubernetes.Interface, given map[string]bool) outcome {
	t.Helper()
	var last outcome
	stableSince := time.Now()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		cur := read(t, c, given)
		if !cmp.Equal(cur, last) {
			last, stableSince = cur, time.Now()
			continue
		}
		if time.Since(stableSince) > 1500*time.Millisecond {
			return cur
		}
	}
	t.Fatalf("no stable outcome; last %+v", last)
	return last
}

func read(t *testing.T, c kubernetes.Interface, given map[string]bool) outcome {
	ctx := context.Background()
	var o outcome
	pods, err := c.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		ref := metav1.GetControllerOf(&p)
		owner := "none"
		if ref != nil {
			owner = ref.Kind + "/" + ref.Name
		}
		name := p.Name
		if !given[name] {
			name = p.GenerateName + "*"
		}
		deleting := ""
		if p.DeletionTimestamp != nil {
			deleting = " deleting"
		}
		o.Pods = append(o.Pods, fmt.Sprintf("%s [%s] %s%s", name, labelsOf(&p), owner, deleting))
	}
	sort.Strings(o.Pods)
	rs, err := c.AppsV1().ReplicaSets("ns").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o.Status = rs.Status
	for i := range o.Status.Conditions {
		o.Status.Conditions[i].LastTransitionTime = metav1.Time{}
		o.Status.Conditions[i].Message = generated.ReplaceAllString(o.Status.Conditions[i].Message, "web-XXXXX")
	}
	events, err := c.CoreV1().Events("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		o.Events = append(o.Events, fmt.Sprintf("%s %s %s/%s %s: %s", e.Source.Component, e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name,
			e.Reason, generated.ReplaceAllString(e.Message, "web-XXXXX")))
	}
	sort.Strings(o.Events)
	return o
}

// runUpstream runs upstream's ReplicaSet controller on a fake clientset
// holding the scenario's objects (the fake names generated pods).
func runUpstream(t *testing.T, sc scenario) outcome {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.StaleControllerConsistencyReplicaSet, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var objs []runtime.Object
	given := map[string]bool{}
	for _, p := range sc.pods {
		objs = append(objs, p.DeepCopy())
		given[p.Name] = true
	}
	client := fake.NewClientset(objs...)
	client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		pod := action.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if pod.Name == "" {
			pod.Name = pod.GenerateName + utilrand.String(5)
		}
		return false, nil, nil
	})
	// As kube-apiserver, a pod bound to a node is deleted gracefully: it
	// is marked deleted and stays until its kubelet (none here) removes it.
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	client.PrependReactor("delete", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		obj, err := client.Tracker().Get(podsGVR, "ns", action.(k8stesting.DeleteAction).GetName())
		if err != nil || obj.(*corev1.Pod).Spec.NodeName == "" {
			return false, nil, nil
		}
		p := obj.(*corev1.Pod).DeepCopy()
		if p.DeletionTimestamp == nil {
			now := metav1.Now()
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, ptr.To[int64](30)
			if err := client.Tracker().Update(podsGVR, p, "ns"); err != nil {
				return true, nil, err
			}
		}
		return true, p, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	rsc := replicaset.NewReplicaSetController(ctx, factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods(), client, replicaset.BurstReplicas)
	factory.Start(ctx.Done())
	go rsc.Run(ctx, 1)
	rs := sc.rs.DeepCopy()
	rs.Namespace, rs.UID, rs.Generation = "ns", "rs-uid", 1
	if _, err := client.AppsV1().ReplicaSets("ns").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return observe(t, client, given)
}

// runOurs runs admitd's controller against an in-process API server
// holding the scenario's objects, created (and their status written)
// through the API.
func runOurs(t *testing.T, sc scenario) outcome {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, cat := memory.New(), registry.NewCatalogue()
	api := apiserver.New(apiserver.Config{Store: store, Catalogue: cat, Admission: admission.NewChain()})
	if err := api.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	admin := controllers.ControllerUser("admin")
	admin.Groups = append(admin.Groups, "system:masters")
	c, err := controllers.NewClientset(api.Loopback(admin))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	given := map[string]bool{}
	for _, p := range sc.pods {
		given[p.Name] = true
		created, err := c.CoreV1().Pods("ns").Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status = p.Status
		if _, err := c.CoreV1().Pods("ns").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kind := ours.ReplicaSets
	client, err := controllers.NewClientset(api.Loopback(kind.User))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	recorder, err := controllers.NewEventRecorder(ctx, api.Loopback(kind.User), kind.Component, log)
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := ours.New(ours.Config{Kind: kind, Store: store, Catalogue: cat, Client: client, Recorder: recorder, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	go ctrl.Run(ctx)
	if _, err := c.AppsV1().ReplicaSets("ns").Create(ctx, sc.rs.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return observe(t, c, given)
}

func webRS(replicas, minReadySeconds int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": "web"}
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.ReplicaSetSpec{
		Replicas: ptr.To(replicas), MinReadySeconds: minReadySeconds, Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
}

// pod is an orphan pod with labels, on node (or none), ready since
// readyAgo (never when negative).
func pod(name string, labels map[string]string, node string, readyAgo time.Duration) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels},
		Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	if readyAgo >= 0 {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(time.Now().Add(-readyAgo).Truncate(time.Second))}}
	}
	return p
}

var web = map[string]string{"app": "web"}

// admitd's controller and upstream's, each on the same ReplicaSet and
// pods, end with the same pods, status and events.
func TestControllerMatchesUpstream(t *testing.T) {
	for _, sc := range []scenario{
		{name: "creates", rs: webRS(3, 0)},
		// Scale downs keep to unassigned pods: kube-apiserver deletes a pod
		// bound to a node gracefully (it stays, terminating, until its
		// kubelet removes it), admitd deletes it at once (a gap of the API
		// server, not of the controller).
		{name: "adopts orphans and deletes the surplus, unready first", rs: webRS(2, 0), pods: []*corev1.Pod{
			pod("a", web, "", time.Hour), pod("b", web, "", -1), pod("c", web, "", -1), pod("d", web, "", 2*time.Hour)}},
		{name: "adopts and creates the rest", rs: webRS(3, 0), pods: []*corev1.Pod{
			pod("a", web, "n1", time.Hour), pod("other", map[string]string{"app": "other"}, "", -1)}},
		{name: "available after minReadySeconds", rs: webRS(2, 600), pods: []*corev1.Pod{
			pod("old", web, "n1", time.Hour), pod("new", web, "n1", time.Second)}},
		{name: "scale to zero", rs: webRS(0, 0), pods: []*corev1.Pod{pod("a", web, "", time.Hour), pod("b", web, "", -1)}},
		{name: "adopts a pod with more labels than the selector", rs: webRS(1, 0), pods: []*corev1.Pod{
			pod("mine", map[string]string{"app": "web", "tier": "front"}, "", time.Hour)}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			want := runUpstream(t, sc)
			got := runOurs(t, sc)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("outcome differs (-upstream +admitd):\n%s", d)
			}
		})
	}
}
