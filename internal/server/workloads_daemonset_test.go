package server

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// daemonSetOnOneNode creates a node and a DaemonSet in namespace ns; its
// pods tolerate the not-ready taint TaintNodesByCondition gives the node
// (no kubelet here makes it ready).
func daemonSetOnOneNode(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	readyNamespace(t, c, ns, nil)
	if _, err := c.CoreV1().Nodes().Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent"}, Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "nginx"}},
				Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}}}}
	if _, err := c.AppsV1().DaemonSets(ns).Create(t.Context(), ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// admitd serve runs the DaemonSet controller: a DaemonSet gets its pod on
// the one node, created as the controller's service account.
func TestDaemonSetControllerRuns(t *testing.T) {
	c := startWithControllers(t)
	daemonSetOnOneNode(t, c, "on")
	eventually(t, "the daemon pod", func() (bool, string) {
		pods, err := c.CoreV1().Pods("on").List(t.Context(), metav1.ListOptions{})
		if err != nil || len(pods.Items) != 1 {
			return false, fmt.Sprint(len(pods.Items), " pods, ", err)
		}
		m := pods.Items[0].ManagedFields
		return len(m) > 0 && m[0].Manager == "kube-controller-manager", fmt.Sprint("managed fields ", m)
	})
}

// --controllers=*,-daemonset leaves DaemonSets without pods or revisions.
func TestControllersFlagDisablesDaemonSets(t *testing.T) {
	c := startWithControllers(t, "*", "-daemonset")
	daemonSetOnOneNode(t, c, "off")
	time.Sleep(time.Second)
	pods, err := c.CoreV1().Pods("off").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("pods: %d, %v; want none with the controller off", len(pods.Items), err)
	}
	revs, err := c.AppsV1().ControllerRevisions("off").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(revs.Items) != 0 {
		t.Errorf("controllerrevisions: %d, %v; want none with the controller off", len(revs.Items), err)
	}
}
