package server

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

func webStatefulSet(replicas int32) *appsv1.StatefulSet {
	labels := map[string]string{"app": "web"}
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.StatefulSetSpec{
		Replicas: ptr.To(replicas), ServiceName: "web", Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}}},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "www"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}}
}

// stsEvents are the distinct "type reason: message" of the
// statefulset-controller's events about the StatefulSet web, sorted.
func stsEvents(t *testing.T, c kubernetes.Interface, ns string) []string {
	t.Helper()
	list, err := c.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.Kind == "StatefulSet" && ev.Source.Component == "statefulset-controller" {
			out = append(out, ev.Type+" "+ev.Reason+": "+ev.Message)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// In a namespace enforcing the restricted Pod Security level, the
// StatefulSet's claim is created, its pod refused with PodSecurity's
// message in a FailedCreate event, and its status says 0 replicas, as
// kube-controller-manager 1.37.2 did for the same set
// (test/e2e/workloads/testdata/statefulset/kcm-1.37.2-locked.txt).
func TestStatefulSetRefusedByPodSecurity(t *testing.T) {
	c := startWithControllers(t)
	readyNamespace(t, c, "locked", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	if _, err := c.AppsV1().StatefulSets("locked").Create(t.Context(), webStatefulSet(3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Normal SuccessfulCreate: Create Claim www-web-0 Pod web-0 in StatefulSet web success",
		"Warning FailedCreate: Create Pod web-0 in StatefulSet web failed error: " +
			`pods "web-0" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`,
	}
	eventually(t, "the events", func() (bool, string) {
		got := stsEvents(t, c, "locked")
		return slices.Equal(got, want), fmt.Sprintf("events %q, want %q", got, want)
	})
	eventually(t, "the status", func() (bool, string) {
		set, err := c.AppsV1().StatefulSets("locked").Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		s := set.Status
		return s.Replicas == 0 && s.ObservedGeneration == 1 && s.CurrentRevision != "" && s.CurrentRevision == s.UpdateRevision &&
			ptr.Deref(s.CollisionCount, -1) == 0, fmt.Sprintf("status %+v", s)
	})
}

// --controllers=*,-statefulset leaves StatefulSets without pods.
func TestControllersFlagDisablesStatefulSets(t *testing.T) {
	c := startWithControllers(t, "*", "-statefulset")
	readyNamespace(t, c, "off", nil)
	if _, err := c.AppsV1().StatefulSets("off").Create(t.Context(), webStatefulSet(1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	pods, err := c.CoreV1().Pods("off").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("pods: %d, %v; want none with the controller off", len(pods.Items), err)
	}
}
