package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAggregatedRules(t *testing.T) {
	labelled := func(name string, labels map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
	}
	get, list := rule(l("get"), l(""), l("pods")), rule(l("list"), l(""), l("pods"))
	agg := labelled("agg", map[string]string{"x": "1"}, rule(l("stale"), l(""), l("pods")))
	agg.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
		{MatchLabels: map[string]string{"x": "1"}}, {MatchLabels: map[string]string{"y": "1"}}}}
	all := []*rbacv1.ClusterRole{
		labelled("z", map[string]string{"x": "1"}, get),
		labelled("a", map[string]string{"x": "1"}, list, get),
		labelled("y", map[string]string{"y": "1"}, get, rule(l("watch"), l(""), l("pods"))),
		labelled("other", nil, rule(l("delete"), l(""), l("pods"))),
		agg,
	}
	rules, ok, err := AggregatedRules(agg, all)
	// "a" before "z" (by name), each rule once, the role's own rules ignored.
	want := []rbacv1.PolicyRule{list, get, rule(l("watch"), l(""), l("pods"))}
	if err != nil || !ok || !sameRules(rules, want) {
		t.Errorf("AggregatedRules(agg) = %v, %v, %v; want %v", rules, ok, err, want)
	}
	if rules, ok, err := AggregatedRules(all[0], all); ok || rules != nil || err != nil {
		t.Errorf("AggregatedRules(no aggregationRule) = %v, %v, %v; want nil, false, nil", rules, ok, err)
	}
	empty := labelled("empty", nil)
	empty.AggregationRule = &rbacv1.AggregationRule{}
	if rules, ok, _ := AggregatedRules(empty, all); !ok || rules == nil || len(rules) != 0 {
		t.Errorf("AggregatedRules(no selectors) = %v, %v; want no rules (not nil), true", rules, ok)
	}
	bad := labelled("bad", nil)
	bad.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}}}}
	if _, _, err := AggregatedRules(bad, all); err == nil {
		t.Error("AggregatedRules(invalid selector) = nil error, want one")
	}
}
