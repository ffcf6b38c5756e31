package server

import (
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
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

func webReplicaSet(replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": "web"}
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.ReplicaSetSpec{
		Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}}}}}
}

// generatedName stands for the random suffix of a generated pod name.
var generatedName = regexp.MustCompile(`\bweb-[a-z0-9]{5}\b`)

// combined starts the message of the event client-go's recorder makes of
// ten similar ones in a row (as kube-controller-manager's do).
const combined = "(combined from similar events): "

// rsEvents are the distinct "type reason: message" of the events about the
// ReplicaSet web, generated names replaced by web-XXXXX and the combined
// prefix dropped, sorted.
func rsEvents(t *testing.T, c kubernetes.Interface, ns string) []string {
	t.Helper()
	list, err := c.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.Kind == "ReplicaSet" && ev.InvolvedObject.Name == "web" && ev.Source.Component == "replicaset-controller" {
			out = append(out, ev.Type+" "+ev.Reason+": "+generatedName.ReplaceAllString(strings.TrimPrefix(ev.Message, combined), "web-XXXXX"))
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// replicaFailure is the ReplicaSet's ReplicaFailure condition as
// "status reason: message", generated names replaced.
func replicaFailure(rs *appsv1.ReplicaSet) string {
	for _, c := range rs.Status.Conditions {
		if c.Type == appsv1.ReplicaSetReplicaFailure {
			return string(c.Status) + " " + c.Reason + ": " + generatedName.ReplaceAllString(c.Message, "web-XXXXX")
		}
	}
	return ""
}

// counts are the ReplicaSet's status counts, terminatingReplicas -1 when
// unset.
func counts(rs *appsv1.ReplicaSet) string {
	return fmt.Sprintf("replicas %d fullyLabeled %d observedGeneration %d terminating %d", rs.Status.Replicas,
		rs.Status.FullyLabeledReplicas, rs.Status.ObservedGeneration, ptr.Deref(rs.Status.TerminatingReplicas, -1))
}

// Recorded from kube-apiserver + kube-controller-manager 1.37.2 (KCM=1)
// for the same objects (testdata/kcm-1.37.2-replicasets.txt).
const (
	podSecurityRefusal = `pods "web-XXXXX" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	quotaRefusal       = `pods "web-XXXXX" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`
)

// In a namespace enforcing the restricted Pod Security level, a
// ReplicaSet of a pod that sets no securityContext gets no pod,
// kube-controller-manager's FailedCreate events with PodSecurity's refusal,
// and the ReplicaFailure condition with the same message: the controller's
// creates go through admission as its own service account. (A privileged
// container is refused earlier, by the ReplicaSet's validation, without
// --allow-privileged.)
func TestReplicaSetRefusedByPodSecurity(t *testing.T) {
	c := startWithControllers(t)
	readyNamespace(t, c, "locked", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	if _, err := c.AppsV1().ReplicaSets("locked").Create(t.Context(), webReplicaSet(3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"Warning FailedCreate: Error creating: " + podSecurityRefusal}
	eventually(t, "the FailedCreate event", func() (bool, string) {
		got := rsEvents(t, c, "locked")
		return slices.Equal(got, want), fmt.Sprintf("events %q, want %q", got, want)
	})
	eventually(t, "the ReplicaFailure condition", func() (bool, string) {
		rs, err := c.AppsV1().ReplicaSets("locked").Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		got := replicaFailure(rs)
		return got == "True FailedCreate: "+podSecurityRefusal && counts(rs) == "replicas 0 fullyLabeled 0 observedGeneration 1 terminating 0",
			"condition " + got + ", " + counts(rs)
	})
	pods, err := c.CoreV1().Pods("locked").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("pods: %d, %v; want none", len(pods.Items), err)
	}
}

// With a quota of 2 pods, a ReplicaSet of 3 gets 2 pods (two
// SuccessfulCreate events), a FailedCreate event with the quota's refusal
// and the ReplicaFailure condition, as on kube-controller-manager.
func TestReplicaSetLimitedByQuota(t *testing.T) {
	c := startWithControllers(t)
	readyNamespace(t, c, "tight", nil)
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: list("pods", "2")}}
	if _, err := c.CoreV1().ResourceQuotas("tight").Create(t.Context(), q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	quotaUsed(t, c, "tight", list("pods", "0"))
	if _, err := c.AppsV1().ReplicaSets("tight").Create(t.Context(), webReplicaSet(3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Normal SuccessfulCreate: Created pod: web-XXXXX",
		"Warning FailedCreate: Error creating: " + quotaRefusal,
	}
	eventually(t, "the events", func() (bool, string) {
		got := rsEvents(t, c, "tight")
		return slices.Equal(got, want), fmt.Sprintf("events %q, want %q", got, want)
	})
	eventually(t, "2 replicas and the ReplicaFailure condition", func() (bool, string) {
		rs, err := c.AppsV1().ReplicaSets("tight").Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		got := replicaFailure(rs)
		return got == "True FailedCreate: "+quotaRefusal && counts(rs) == "replicas 2 fullyLabeled 2 observedGeneration 1 terminating 0",
			"condition " + got + ", " + counts(rs)
	})
	pods, err := c.CoreV1().Pods("tight").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 2 {
		t.Errorf("pods: %d, %v; want 2", len(pods.Items), err)
	}
}

// --controllers=*,-replicaset-controller leaves ReplicaSets without pods.
func TestControllersFlagDisablesReplicaSets(t *testing.T) {
	c := startWithControllers(t, "*", "-replicaset")
	readyNamespace(t, c, "off", nil)
	if _, err := c.AppsV1().ReplicaSets("off").Create(t.Context(), webReplicaSet(1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	pods, err := c.CoreV1().Pods("off").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("pods: %d, %v; want none with the controller off", len(pods.Items), err)
	}
}
