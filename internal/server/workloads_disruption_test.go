package server

import (
	"fmt"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

func createBudget(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}}
	if _, err := c.PolicyV1().PodDisruptionBudgets(ns).Create(t.Context(), pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// The disruption controller runs by default, as its service account
// through RBAC (a budget's status is observed), and --controllers
// =*,-disruption-controller turns it off (the status stays empty).
func TestControllersFlagDisablesDisruptionController(t *testing.T) {
	c := startWithControllers(t, "*")
	readyNamespace(t, c, "on", nil)
	createBudget(t, c, "on")
	eventually(t, "the budget's status observed", func() (bool, string) {
		pdb, err := c.PolicyV1().PodDisruptionBudgets("on").Get(t.Context(), "b", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return pdb.Status.ObservedGeneration == 1 && len(pdb.Status.Conditions) == 1, fmt.Sprintf("status %+v", pdb.Status)
	})

	c = startWithControllers(t, "*", "-disruption-controller")
	readyNamespace(t, c, "off", nil)
	createBudget(t, c, "off")
	time.Sleep(time.Second)
	pdb, err := c.PolicyV1().PodDisruptionBudgets("off").Get(t.Context(), "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pdb.Status.ObservedGeneration != 0 || len(pdb.Status.Conditions) != 0 {
		t.Errorf("budget with the disruption controller off: %+v, want no status", pdb.Status)
	}
}
