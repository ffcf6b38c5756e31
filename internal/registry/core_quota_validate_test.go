package registry

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func resourceList(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// ResourceQuota writes are checked as kube-apiserver 1.37.2 answers them
// (recorded from it: the same errors in the same order, but for the
// resource list's, which come in map order there too).
func TestResourceQuotaValidation(t *testing.T) {
	q := &corev1.ResourceQuota{ObjectMeta: meta1("rq1"), Spec: corev1.ResourceQuotaSpec{
		Hard:   resourceList("pods", "3"),
		Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort},
		ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
			{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpExists, Values: []string{"a"}},
			{ScopeName: corev1.ResourceQuotaScopeTerminating, Operator: corev1.ScopeSelectorOpIn, Values: []string{}},
		}},
	}}
	q.ResourceVersion = ""
	want := strings.Join([]string{
		`spec.scopes: Invalid value: ["BestEffort","NotBestEffort"]: conflicting scopes`,
		"spec.scopeSelector.matchExpressions.values: Invalid value: [\"a\"]: must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
		`spec.scopeSelector.matchExpressions.operator: Invalid value: "In": must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity`,
		"spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
	}, ", ")
	if got := aggregate(createErrors(t, q)); got != "["+want+"]" {
		t.Errorf("create:\n got %s\nwant [%s]", got, want)
	}
	for _, tc := range []struct {
		hard corev1.ResourceList
		want string
	}{
		{resourceList("pods", "1.5"), `spec.hard[pods]: Invalid value: "1500m": must be an integer`},
		{resourceList("cpu", "-1"), `spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		{resourceList("storage", "1"), `spec.hard[storage]: Invalid value: "storage": must be a standard resource for quota`},
		{resourceList("count/deployments.apps", "2", "requests.hugepages-2Mi", "4Mi"), ""},
	} {
		q := &corev1.ResourceQuota{ObjectMeta: meta1("rq"), Spec: corev1.ResourceQuotaSpec{Hard: tc.hard}}
		q.ResourceVersion = ""
		if got := aggregate(createErrors(t, q)); got != tc.want {
			t.Errorf("hard %v:\n got %s\nwant %s", tc.hard, got, tc.want)
		}
	}
}

func TestResourceQuotaUpdateValidation(t *testing.T) {
	old := &corev1.ResourceQuota{ObjectMeta: meta1("rq2"), Spec: corev1.ResourceQuotaSpec{Hard: resourceList("pods", "3")}}
	scoped := old.DeepCopy()
	scoped.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
	want := `spec.scopes: Invalid value: ["BestEffort"]: field is immutable`
	if got := aggregate(updateErrors(t, scoped, old)); got != want {
		t.Errorf("scopes added:\n got %s\nwant %s", got, want)
	}
	status := old.DeepCopy()
	status.Status = corev1.ResourceQuotaStatus{Hard: resourceList("pods", "3", "bogus", "1"), Used: resourceList("pods", "0.5")}
	r := resourceFor(t, status)
	errs := r.ValidateSubresourceChange("status", PrepareForUpdate(r, "status", status, old), old)
	want = `[status.hard[bogus]: Invalid value: "bogus": must be a standard resource type or fully qualified, ` +
		`status.hard[bogus]: Invalid value: "bogus": must be a standard resource for quota, status.used[pods]: Invalid value: "500m": must be an integer]`
	if got := aggregate(errs); got != want {
		t.Errorf("status:\n got %s\nwant %s", got, want)
	}
	status = old.DeepCopy()
	status.ResourceVersion = ""
	if got := aggregate(r.ValidateSubresourceChange("status", PrepareForUpdate(r, "status", status, old), old)); !strings.Contains(got, "resourceVersion: Required value") {
		t.Errorf("status without resourceVersion: %s, want resourceVersion: Required value", got)
	}
}

// A create warns when a request exceeds its limit, as upstream's strategy.
func TestResourceQuotaWarnings(t *testing.T) {
	q := &corev1.ResourceQuota{ObjectMeta: meta1("rq2"), Spec: corev1.ResourceQuotaSpec{Hard: resourceList("requests.cpu", "2", "limits.cpu", "1")}}
	want := "ResourceQuota requests.cpu (2) should be less than limits.cpu (1)"
	if got := resourceFor(t, q).Warnings(q, nil); len(got) != 1 || got[0] != want {
		t.Errorf("Warnings = %q, want [%q]", got, want)
	}
}
