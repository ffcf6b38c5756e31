package registry

import (
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// PodDisruptionBudget writes are checked as kube-apiserver 1.37.2 answers
// them (recorded from it): one of minAvailable and maxUnavailable, each a
// count or a percentage up to 100%, the selector, the unhealthy pod
// eviction policy; on status writes, conditions and counts.
func TestPodDisruptionBudgetValidation(t *testing.T) {
	pdb := func(spec policyv1.PodDisruptionBudgetSpec) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{ObjectMeta: meta1("p"), Spec: spec}
	}
	count, percent := func(n int32) *intstr.IntOrString { return ptr.To(intstr.FromInt32(n)) }, func(s string) *intstr.IntOrString { return ptr.To(intstr.FromString(s)) }
	for _, tc := range []struct {
		name string
		obj  *policyv1.PodDisruptionBudget
		want string
	}{
		{"both", pdb(policyv1.PodDisruptionBudgetSpec{MinAvailable: count(1), MaxUnavailable: percent("10%"), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}),
			`spec: Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"a":"b"}},"MaxUnavailable":"10%","UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set`},
		{"negative", pdb(policyv1.PodDisruptionBudgetSpec{MinAvailable: count(-1)}), "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"},
		{"over 100%", pdb(policyv1.PodDisruptionBudgetSpec{MinAvailable: percent("150%")}), `spec.minAvailable: Invalid value: "150%": must not be greater than 100%`},
		{"not a percent", pdb(policyv1.PodDisruptionBudgetSpec{MaxUnavailable: percent("abc")}),
			`spec.maxUnavailable: Invalid value: "abc": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`},
		{"policy", pdb(policyv1.PodDisruptionBudgetSpec{UnhealthyPodEvictionPolicy: ptr.To(policyv1.UnhealthyPodEvictionPolicyType("Bogus"))}),
			`spec.unhealthyPodEvictionPolicy: Unsupported value: "Bogus": supported values: "AlwaysAllow", "IfHealthyBudget"`},
		{"selector", pdb(policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: metav1.LabelSelectorOpIn}}}}),
			"spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"},
		{"valid", pdb(policyv1.PodDisruptionBudgetSpec{MinAvailable: percent("5%")}), ""},
	} {
		if got := aggregate(createErrors(t, tc.obj)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}

	// an invalid label value a stored selector requires may stay; a new
	// one may not have it
	stored := pdb(policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: metav1.LabelSelectorOpIn, Values: []string{"b c"}}}}})
	if got := aggregate(resourceFor(t, stored).ValidateChange(stored.DeepCopy(), stored)); got != "" {
		t.Errorf("update keeping an invalid stored label value: %s", got)
	}
	if got := aggregate(createErrors(t, stored.DeepCopy())); got == "" {
		t.Error("create with an invalid label value in the selector: no error")
	}

	old := pdb(policyv1.PodDisruptionBudgetSpec{MinAvailable: percent("5%")})
	status := old.DeepCopy()
	status.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: -1, Conditions: []metav1.Condition{{Type: "x"}}}
	want := "[status.conditions[0].status: Required value, status.conditions[0].lastTransitionTime: Required value, status.conditions[0].reason: Required value, status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0]"
	if got := aggregate(resourceFor(t, status).ValidateSubresourceChange("status", status, old)); got != want {
		t.Errorf("status:\n got %s\nwant %s", got, want)
	}
	if r := resourceFor(t, old); !r.Strategy.RequireResourceVersion {
		t.Error("a PodDisruptionBudget update need not name its resourceVersion; upstream's strategy refuses unconditional updates")
	}
}
