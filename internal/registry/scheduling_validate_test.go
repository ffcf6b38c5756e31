package registry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// PriorityClass writes are checked as kube-apiserver 1.37.2 answers them
// (recorded from it): user values up to a billion, "system-" names only
// for the two system classes as defined, the preemption policy; value and
// policy immutable.
func TestPriorityClassValidation(t *testing.T) {
	pc := func(name string, value int32, policy *corev1.PreemptionPolicy) *schedulingv1.PriorityClass {
		return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, PreemptionPolicy: policy}
	}
	nodeCritical := pc("system-node-critical", 2000001000, nil)
	nodeCritical.GlobalDefault = true
	for _, tc := range []struct {
		obj  *schedulingv1.PriorityClass
		want string
	}{
		{pc("pc-big", 2000000000, nil), "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"},
		{pc("pc-max", 1000000000, nil), ""},
		{pc("system-foo", 5, nil), "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-foo is not a known system priority class"},
		{pc("system-cluster-critical", 5, nil), "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-cluster-critical PriorityClass must be 2000000000"},
		{nodeCritical, "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: globalDefault of system-node-critical PriorityClass must be false"},
		{pc("system-cluster-critical", 2000000000, nil), ""},
		{pc("pc-pol", 5, ptr.To(corev1.PreemptionPolicy("Bogus"))), `preemptionPolicy: Unsupported value: "Bogus": supported values: "PreemptLowerPriority", "Never"`},
		{pc("pc-pol2", 5, ptr.To(corev1.PreemptionPolicy(""))), "preemptionPolicy: Required value"},
	} {
		if got := aggregate(createErrors(t, tc.obj)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.obj.Name, got, tc.want)
		}
		if tc.obj.Generation != 1 {
			t.Errorf("%s: generation %d after create, want 1", tc.obj.Name, tc.obj.Generation)
		}
	}
	old := pc("pc-ok", 5, ptr.To(corev1.PreemptLowerPriority))
	old.ResourceVersion = "1"
	changed := pc("pc-ok", 6, ptr.To(corev1.PreemptNever))
	changed.ResourceVersion = "1"
	want := `[value: Forbidden: may not be changed in an update., preemptionPolicy: Invalid value: "Never": field is immutable]`
	if got := aggregate(resourceFor(t, changed).ValidateChange(changed, old)); got != want {
		t.Errorf("update:\n got %s\nwant %s", got, want)
	}
}
