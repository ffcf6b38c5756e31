package apiserver

import (
	"fmt"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBudgetRefusals: checkDisruptionAllowed answers as upstream's
// checkAndDecrement, for each state of the budget's status the
// disruption controller or a previous eviction leaves.
func TestBudgetRefusals(t *testing.T) {
	cond := func(status metav1.ConditionStatus, reason, msg string) []metav1.Condition {
		return []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: status, Reason: reason, Message: msg}}
	}
	for _, tc := range []struct {
		name   string
		status policyv1.PodDisruptionBudgetStatus
		code   int32
		msg    string // the status's message
		cause  string
	}{
		{"unobserved generation", policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}, 429,
			"Cannot evict pod as it would violate the pod's disruption budget.", "The disruption budget b is still being processed by the server."},
		{"negative", policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: -1}, 403,
			`poddisruptionbudget.policy "b" is forbidden: pdb disruptions allowed is negative`,
			"The disruption budget b does not allow evicting pods currently: pdb disruptions allowed is negative"},
		{"too many disrupted pods", policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1, DisruptedPods: manyPods(2001)}, 403,
			`poddisruptionbudget.policy "b" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller`,
			"The disruption budget b does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller"},
		{"sync failed", policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 3, DesiredHealthy: 1,
			Conditions: cond(metav1.ConditionFalse, policyv1.SyncFailedReason, "found no controllers for pod \"p\"")}, 429,
			"Cannot evict pod as it would violate the pod's disruption budget.",
			`The disruption budget b does not allow evicting pods currently because it failed sync: found no controllers for pod "p"`},
		{"too few healthy", policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 2, DesiredHealthy: 2,
			Conditions: cond(metav1.ConditionFalse, policyv1.InsufficientPodsReason, "")}, 429,
			"Cannot evict pod as it would violate the pod's disruption budget.", "The disruption budget b needs 2 healthy pods and has 2 currently"},
		{"another reason", policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 3, DesiredHealthy: 2,
			Conditions: cond(metav1.ConditionFalse, "Paused", "by hand")}, 429,
			"Cannot evict pod as it would violate the pod's disruption budget.", "The disruption budget b does not allow evicting pods currently (Paused): by hand"},
		{"taken by an eviction", policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 3, DesiredHealthy: 2,
			Conditions: cond(metav1.ConditionFalse, policyv1.InsufficientPodsReason, "")}, 429,
			"Cannot evict pod as it would violate the pod's disruption budget.", "The disruption budget b does not allow evicting pods currently"},
		{"allowed", policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1}, 0, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b", Generation: 1}, Status: tc.status}
			err := checkDisruptionAllowed(pdb)
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("checkDisruptionAllowed = %v, want nil", err)
				}
				return
			}
			st, ok := err.(apierrors.APIStatus)
			if !ok {
				t.Fatalf("checkDisruptionAllowed = %v, want a Status error", err)
			}
			s := st.Status()
			if s.Code != tc.code || s.Message != tc.msg || s.Details == nil || len(s.Details.Causes) != 1 ||
				s.Details.Causes[0].Type != policyv1.DisruptionBudgetCause || s.Details.Causes[0].Message != tc.cause {
				t.Errorf("checkDisruptionAllowed = %d %q %+v, want %d %q cause %q", s.Code, s.Message, s.Details, tc.code, tc.msg, tc.cause)
			}
		})
	}
}

func manyPods(n int) map[string]metav1.Time {
	out := make(map[string]metav1.Time, n)
	for i := range n {
		out[fmt.Sprintf("p%d", i)] = metav1.Time{}
	}
	return out
}
