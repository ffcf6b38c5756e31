package server

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	getPods  = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}
	listPods = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}
	allPods  = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"*"}}
	autoOff  = map[string]string{rbacv1.AutoUpdateAnnotationKey: "false"}
	autoOn   = map[string]string{rbacv1.AutoUpdateAnnotationKey: "true"}
	user     = func(n string) rbacv1.Subject {
		return rbacv1.Subject{Kind: "User", APIGroup: rbacv1.GroupName, Name: n}
	}
)

func clusterRole(annotations map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r", Annotations: annotations}, Rules: rules}
}

func TestReconcileBootstrapClusterRole(t *testing.T) {
	for _, tc := range []struct {
		name           string
		existing, want *rbacv1.ClusterRole
		wantRules      []rbacv1.PolicyRule // nil: left alone
	}{
		{"missing rule added", clusterRole(autoOn, getPods), clusterRole(autoOn, getPods, listPods), []rbacv1.PolicyRule{getPods, listPods}},
		{"covered: no change", clusterRole(autoOn, allPods), clusterRole(autoOn, getPods, listPods), nil},
		{"extra rules kept", clusterRole(autoOn, getPods, allPods), clusterRole(autoOn, getPods), nil},
		{"autoupdate=false protects", clusterRole(autoOff, getPods), clusterRole(autoOn, getPods, listPods), nil},
		{"annotation added", clusterRole(nil, getPods), clusterRole(autoOn, getPods), []rbacv1.PolicyRule{getPods}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := reconcileBootstrap(tc.existing, tc.want)
			if tc.wantRules == nil {
				if got != nil {
					t.Fatalf("reconcileBootstrap = %+v, want no change", got)
				}
				return
			}
			role, ok := got.(*rbacv1.ClusterRole)
			if !ok || !reflect.DeepEqual(role.Rules, tc.wantRules) {
				t.Fatalf("reconcileBootstrap = %+v, want rules %v", got, tc.wantRules)
			}
			if role.Annotations[rbacv1.AutoUpdateAnnotationKey] != "true" {
				t.Errorf("annotations = %v, want the autoupdate annotation", role.Annotations)
			}
		})
	}
}

func TestReconcileBootstrapAggregationRule(t *testing.T) {
	sel := func(v string) metav1.LabelSelector {
		return metav1.LabelSelector{MatchLabels: map[string]string{"k": v}}
	}
	existing := clusterRole(autoOn)
	existing.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{sel("a"), sel("x")}}
	want := clusterRole(autoOn)
	want.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{sel("a"), sel("b")}}
	got, _ := reconcileBootstrap(existing, want).(*rbacv1.ClusterRole)
	if got == nil || !reflect.DeepEqual(got.AggregationRule.ClusterRoleSelectors, []metav1.LabelSelector{sel("a"), sel("x"), sel("b")}) {
		t.Errorf("reconcileBootstrap = %+v, want selectors a, x, b", got)
	}
	plain := clusterRole(autoOn, getPods)
	if got, _ := reconcileBootstrap(existing, plain).(*rbacv1.ClusterRole); got == nil || got.AggregationRule != nil {
		t.Errorf("reconcileBootstrap to a role without aggregation = %+v, want the aggregationRule removed", got)
	}
}

func TestReconcileBootstrapBinding(t *testing.T) {
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "r"}
	binding := func(annotations map[string]string, ref rbacv1.RoleRef, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Annotations: annotations}, RoleRef: ref, Subjects: subjects}
	}
	got, _ := reconcileBootstrap(binding(autoOn, ref, user("a")), binding(autoOn, ref, user("b"))).(*rbacv1.ClusterRoleBinding)
	if got == nil || !reflect.DeepEqual(got.Subjects, []rbacv1.Subject{user("a"), user("b")}) {
		t.Errorf("missing subject: %+v, want subjects a, b", got)
	}
	if got := reconcileBootstrap(binding(autoOff, ref, user("a")), binding(autoOn, ref, user("b"))); got != nil {
		t.Errorf("protected binding reconciled: %+v", got)
	}
	other := ref
	other.Name = "other"
	if got := reconcileBootstrap(binding(autoOn, other, user("a")), binding(autoOn, ref, user("b"))); got != nil {
		t.Errorf("binding with another roleRef reconciled: %+v", got)
	}
}
