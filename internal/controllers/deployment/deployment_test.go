package deployment

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
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/controllertest"
	"github.com/admitd/admitd/internal/controllers/replicaset"
)

// env is an in-process API server over memory storage running the
// ReplicaSet and Deployment controllers, with an admin client.
type env struct {
	t     *testing.T
	admin kubernetes.Interface
}

func start(t *testing.T) *env {
	t.Helper()
	s := controllertest.Start(t)
	rsClient, rsRecorder := s.Controller(replicaset.ReplicaSets.User, replicaset.ReplicaSets.Component)
	rsc, err := replicaset.New(replicaset.Config{Kind: replicaset.ReplicaSets, Store: s.Store, Catalogue: s.Catalogue, Client: rsClient, Recorder: rsRecorder, Log: s.Log})
	if err != nil {
		t.Fatal(err)
	}
	go rsc.Run(s.Ctx)
	dClient, dRecorder := s.Controller(User, Component)
	dc, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: dClient, Recorder: dRecorder, Log: s.Log})
	if err != nil {
		t.Fatal(err)
	}
	go dc.Run(s.Ctx)
	return &env{t: t, admin: s.Admin}
}

func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	controllertest.Eventually(e.t, 10*time.Second, what, cond)
}

// markReady plays the kubelet: pods not yet running become Running and
// Ready.
func (e *env) markReady() {
	pods, err := e.admin.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	patch := []byte(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning && p.DeletionTimestamp == nil {
			_, _ = e.admin.CoreV1().Pods("default").Patch(context.Background(), p.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		}
	}
}

// replicaSets is "name=spec.replicas" of each ReplicaSet, sorted.
func (e *env) replicaSets() []string {
	list, err := e.admin.AppsV1().ReplicaSets("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, rs := range list.Items {
		out = append(out, fmt.Sprintf("%s=%d", rs.Name, *rs.Spec.Replicas))
	}
	sort.Strings(out)
	return out
}

func deploymentOf(replicas int32, image string, strategy appsv1.DeploymentStrategyType) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Strategy: appsv1.DeploymentStrategy{Type: strategy},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}}}
	return d
}

func (e *env) setImage(image string) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":%q}]}}}}`, image)
	if _, err := e.admin.AppsV1().Deployments("default").Patch(context.Background(), "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// currentReplicaSet is the name of the ReplicaSet of the Deployment's current
// template.
func (e *env) currentReplicaSet() string {
	d, err := e.admin.AppsV1().Deployments("default").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	template := d.Spec.Template.DeepCopy()
	return replicaSetName("web", ComputeHash(template, d.Status.CollisionCount))
}

// Recreate scales the old ReplicaSet to zero and waits for its pods to be
// gone before the new one gets any.
func TestRecreate(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	if _, err := e.admin.AppsV1().Deployments("default").Create(ctx, deploymentOf(2, "nginx", appsv1.RecreateDeploymentStrategyType), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := e.currentReplicaSet()
	e.eventually("the first ReplicaSet", func() (bool, string) {
		e.markReady()
		got := e.replicaSets()
		return len(got) == 1 && got[0] == first+"=2", fmt.Sprint(got)
	})
	e.setImage("nginx:2")
	second := e.currentReplicaSet()
	e.eventually("the second ReplicaSet, the first at zero", func() (bool, string) {
		e.markReady()
		got := e.replicaSets()
		want := []string{first + "=0", second + "=2"}
		sort.Strings(want)
		return strings.Join(got, " ") == strings.Join(want, " "), fmt.Sprint(got)
	})
}

// Scaling a Deployment in the middle of a rolling update spreads the new
// replicas over both ReplicaSets in proportion.
func TestProportionalScaling(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	d := deploymentOf(10, "nginx", appsv1.RollingUpdateDeploymentStrategyType)
	d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(3)), MaxUnavailable: ptr.To(intstr.FromInt32(2))}
	if _, err := e.admin.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := e.currentReplicaSet()
	e.eventually("10 ready replicas", func() (bool, string) {
		e.markReady()
		got, err := e.admin.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && got.Status.AvailableReplicas == 10, fmt.Sprint(err)
	})
	e.setImage("nginx:broken") // its pods never become ready
	second := e.currentReplicaSet()
	// maxSurge 3, maxUnavailable 2: the new ReplicaSet gets 3+2=5, the old keeps 8.
	e.eventually("the rollout stuck at 8 old and 5 new", func() (bool, string) {
		got := e.replicaSets()
		want := []string{first + "=8", second + "=5"}
		sort.Strings(want)
		return strings.Join(got, " ") == strings.Join(want, " "), fmt.Sprint(got)
	})
	// The controller has seen both sets at their sizes once its status
	// says so (it scales from what it has seen, as upstream's from its
	// informers: a scale it handled before would not be proportional).
	e.eventually("the status of 13 replicas, 5 updated", func() (bool, string) {
		got, err := e.admin.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && got.Status.Replicas == 13 && got.Status.UpdatedReplicas == 5, fmt.Sprint(err)
	})
	if _, err := e.admin.AppsV1().Deployments("default").Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":20}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// 13 become 23: 10 added, 8/13 and 5/13 of them rounded, the leftover
	// to the larger.
	e.eventually("the scaling spread in proportion", func() (bool, string) {
		got := e.replicaSets()
		want := []string{first + "=14", second + "=9"}
		sort.Strings(want)
		return strings.Join(got, " ") == strings.Join(want, " "), fmt.Sprint(got)
	})
}

// Old ReplicaSets beyond revisionHistoryLimit are deleted once scaled to
// zero; the kept ones carry increasing revisions.
func TestRevisionHistoryLimit(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	d := deploymentOf(1, "nginx:1", appsv1.RollingUpdateDeploymentStrategyType)
	d.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	if _, err := e.admin.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := 1; i <= 3; i++ {
		if i > 1 {
			e.setImage(fmt.Sprintf("nginx:%d", i))
		}
		names = append(names, e.currentReplicaSet())
		e.eventually(fmt.Sprintf("revision %d rolled out", i), func() (bool, string) {
			e.markReady()
			got, err := e.admin.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			c := getCondition(got.Status, appsv1.DeploymentProgressing)
			return got.Annotations[revisionAnnotation] == fmt.Sprint(i) && c != nil && c.Reason == reasonNewRSAvailable &&
				got.Status.UpdatedReplicas == 1 && got.Status.Replicas == 1, fmt.Sprintf("%v %+v", got.Annotations, got.Status)
		})
	}
	e.eventually("the oldest ReplicaSet deleted", func() (bool, string) {
		got := e.replicaSets()
		want := []string{names[1] + "=0", names[2] + "=1"}
		sort.Strings(want)
		return strings.Join(got, " ") == strings.Join(want, " "), fmt.Sprint(got)
	})
}
