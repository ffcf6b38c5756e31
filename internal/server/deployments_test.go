package server

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// podSuffix is the random suffix of a pod of the first ReplicaSet.
var podSuffix = regexp.MustCompile(`\bweb-5fc9f4bf66-[a-z0-9]{5}\b`)

// generatedNameIn is msg (about "web-XXXXX") about a pod of the
// ReplicaSet rs instead.
func generatedNameIn(rs, msg string) string {
	return strings.ReplaceAll(msg, "web-XXXXX", rs+"-XXXXX")
}

// kubectlDeployment is what `kubectl create deployment web --image=nginx
// --replicas=2` sends.
func kubectlDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}}}}}
}

// rolloutState is a Deployment and its ReplicaSets as one line each:
// name, revision annotations, replicas and status counts, conditions
// (type status reason: message).
func rolloutState(t *testing.T, c kubernetes.Interface, ns string) []string {
	t.Helper()
	d, err := c.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := d.Status
	out := []string{fmt.Sprintf("Deployment %s revision %s: observedGeneration %d replicas %d updated %d ready %d available %d unavailable %d terminating %d",
		d.Name, d.Annotations["deployment.kubernetes.io/revision"], st.ObservedGeneration, st.Replicas, st.UpdatedReplicas,
		st.ReadyReplicas, st.AvailableReplicas, st.UnavailableReplicas, ptr.Deref(st.TerminatingReplicas, -1))}
	for _, cond := range st.Conditions {
		out = append(out, fmt.Sprintf("  %s %s %s: %s", cond.Type, cond.Status, cond.Reason, cond.Message))
	}
	rss, err := c.AppsV1().ReplicaSets(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range rss.Items {
		ref := metav1.GetControllerOf(&rs)
		out = append(out, fmt.Sprintf("ReplicaSet %s [%s] revision %s desired %s max %s: replicas %d status %d owner %s",
			rs.Name, labelsOf(rs.Spec.Template.Labels), rs.Annotations["deployment.kubernetes.io/revision"],
			rs.Annotations["deployment.kubernetes.io/desired-replicas"], rs.Annotations["deployment.kubernetes.io/max-replicas"],
			*rs.Spec.Replicas, rs.Status.Replicas, ref.Kind+"/"+ref.Name))
	}
	return out
}

func labelsOf(m map[string]string) string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return fmt.Sprint(kv)
}

// deploymentEvents are the "reason: message" of the events about the
// Deployment web, sorted.
func deploymentEvents(t *testing.T, c kubernetes.Interface, ns string) []string {
	t.Helper()
	list, err := c.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.Kind == "Deployment" && ev.Source.Component == "deployment-controller" {
			out = append(out, ev.Type+" "+ev.Reason+": "+ev.Message)
		}
	}
	sort.Strings(out)
	return out
}

// A Deployment as kubectl creates it gets the ReplicaSet
// kube-controller-manager 1.37.2 makes for it (same name, so the same
// pod-template-hash, annotations, counts and conditions); after
// `kubectl set image`, a second ReplicaSet of 1 replica (maxSurge 25% of
// 2) and nothing scaled down while no pod is available (no kubelet here),
// as recorded with KCM=1 (testdata/kcm-1.37.2-deployments.txt).
func TestDeploymentRolloutMatchesKCM(t *testing.T) {
	c := startWithControllers(t)
	readyNamespace(t, c, "dep", nil)
	if _, err := c.AppsV1().Deployments("dep").Create(t.Context(), kubectlDeployment(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Deployment web revision 1: observedGeneration 1 replicas 2 updated 2 ready 0 available 0 unavailable 2 terminating 0",
		"  Available False MinimumReplicasUnavailable: Deployment does not have minimum availability.",
		`  Progressing True ReplicaSetUpdated: ReplicaSet "web-5fc9f4bf66" is progressing.`,
		"ReplicaSet web-5fc9f4bf66 [[app=web pod-template-hash=5fc9f4bf66]] revision 1 desired 2 max 3: replicas 2 status 2 owner Deployment/web",
	}
	eventually(t, "the first rollout", func() (bool, string) {
		got := rolloutState(t, c, "dep")
		return slices.Equal(got, want), fmt.Sprintf("\n%q\nwant\n%q", got, want)
	})
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}`)
	if _, err := c.AppsV1().Deployments("dep").Patch(t.Context(), "web", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	want = []string{
		"Deployment web revision 2: observedGeneration 2 replicas 3 updated 1 ready 0 available 0 unavailable 3 terminating 0",
		"  Available False MinimumReplicasUnavailable: Deployment does not have minimum availability.",
		`  Progressing True ReplicaSetUpdated: ReplicaSet "web-5b959b7588" is progressing.`,
		"ReplicaSet web-5b959b7588 [[app=web pod-template-hash=5b959b7588]] revision 2 desired 2 max 3: replicas 1 status 1 owner Deployment/web",
		"ReplicaSet web-5fc9f4bf66 [[app=web pod-template-hash=5fc9f4bf66]] revision 1 desired 2 max 3: replicas 2 status 2 owner Deployment/web",
	}
	// Progressing may also stay at NewReplicaSetCreated: when the status
	// write that follows the creation conflicts (as upstream's does, its
	// object is the one read before), the retry compares with a status
	// whose updatedReplicas the new ReplicaSet may already have reached,
	// and sees no progress; kube-controller-manager has the same race.
	created := slices.Clone(want)
	created[2] = `  Progressing True NewReplicaSetCreated: Created new replica set "web-5b959b7588"`
	eventually(t, "the rolling update's first step", func() (bool, string) {
		got := rolloutState(t, c, "dep")
		return slices.Equal(got, want) || slices.Equal(got, created), fmt.Sprintf("\n%q\nwant\n%q", got, want)
	})
	wantEvents := []string{
		"Normal ScalingReplicaSet: Scaled up replica set web-5b959b7588 from 0 to 1",
		"Normal ScalingReplicaSet: Scaled up replica set web-5fc9f4bf66 from 0 to 2",
	}
	eventually(t, "the ScalingReplicaSet events", func() (bool, string) {
		got := deploymentEvents(t, c, "dep")
		return slices.Equal(got, wantEvents), fmt.Sprintf("%q", got)
	})
}

// markReady plays the kubelet: every pod of ns not yet ready is made
// Running and Ready.
func markReady(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	pods, err := c.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		_, _ = c.CoreV1().Pods(ns).Patch(t.Context(), p.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	}
}

// With its pods becoming ready, the rolling update finishes as on
// kube-controller-manager: the new ReplicaSet at 2, the old one at 0, the
// Deployment available and progressed, and the same ScalingReplicaSet
// events.
func TestDeploymentRolloutCompletes(t *testing.T) {
	c := startWithControllers(t)
	readyNamespace(t, c, "dep", nil)
	if _, err := c.AppsV1().Deployments("dep").Create(t.Context(), kubectlDeployment(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first ReplicaSet", func() (bool, string) {
		markReady(t, c, "dep")
		d, err := c.AppsV1().Deployments("dep").Get(t.Context(), "web", metav1.GetOptions{})
		return err == nil && d.Status.AvailableReplicas == 2, fmt.Sprint(err)
	})
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}`)
	if _, err := c.AppsV1().Deployments("dep").Patch(t.Context(), "web", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Deployment web revision 2: observedGeneration 2 replicas 2 updated 2 ready 2 available 2 unavailable 0 terminating 0",
		"  Available True MinimumReplicasAvailable: Deployment has minimum availability.",
		`  Progressing True NewReplicaSetAvailable: ReplicaSet "web-5b959b7588" has successfully progressed.`,
		"ReplicaSet web-5b959b7588 [[app=web pod-template-hash=5b959b7588]] revision 2 desired 2 max 3: replicas 2 status 2 owner Deployment/web",
		"ReplicaSet web-5fc9f4bf66 [[app=web pod-template-hash=5fc9f4bf66]] revision 1 desired 2 max 3: replicas 0 status 0 owner Deployment/web",
	}
	eventually(t, "the finished rollout", func() (bool, string) {
		markReady(t, c, "dep")
		got := rolloutState(t, c, "dep")
		return slices.Equal(got, want), fmt.Sprintf("\n%q\nwant\n%q", got, want)
	})
	wantEvents := []string{
		"Normal ScalingReplicaSet: Scaled down replica set web-5fc9f4bf66 from 1 to 0",
		"Normal ScalingReplicaSet: Scaled down replica set web-5fc9f4bf66 from 2 to 1",
		"Normal ScalingReplicaSet: Scaled up replica set web-5b959b7588 from 0 to 1",
		"Normal ScalingReplicaSet: Scaled up replica set web-5b959b7588 from 1 to 2",
		"Normal ScalingReplicaSet: Scaled up replica set web-5fc9f4bf66 from 0 to 2",
	}
	eventually(t, "the ScalingReplicaSet events", func() (bool, string) {
		got := deploymentEvents(t, c, "dep")
		return slices.Equal(got, wantEvents), fmt.Sprintf("%q", got)
	})
}

// In a namespace enforcing the restricted level, a Deployment's
// ReplicaSet gets no pod, and the Deployment carries its ReplicaFailure
// condition with PodSecurity's message, after kube-controller-manager's
// Progressing and Available conditions.
func TestDeploymentRefusedByPodSecurity(t *testing.T) {
	c := startWithControllers(t)
	readyNamespace(t, c, "depsec", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	if _, err := c.AppsV1().Deployments("depsec").Create(t.Context(), kubectlDeployment(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	refusal := generatedNameIn("web-5fc9f4bf66", podSecurityRefusal)
	want := []string{
		"Deployment web revision 1: observedGeneration 1 replicas 0 updated 0 ready 0 available 0 unavailable 2 terminating 0",
		`  Progressing True NewReplicaSetCreated: Created new replica set "web-5fc9f4bf66"`,
		"  Available False MinimumReplicasUnavailable: Deployment does not have minimum availability.",
		"  ReplicaFailure True FailedCreate: " + refusal,
		"ReplicaSet web-5fc9f4bf66 [[app=web pod-template-hash=5fc9f4bf66]] revision 1 desired 2 max 3: replicas 2 status 0 owner Deployment/web",
	}
	eventually(t, "the refused rollout", func() (bool, string) {
		got := rolloutState(t, c, "depsec")
		for i := range got {
			got[i] = podSuffix.ReplaceAllString(got[i], "web-5fc9f4bf66-XXXXX")
		}
		return slices.Equal(got, want), fmt.Sprintf("\n%q\nwant\n%q", got, want)
	})
}
