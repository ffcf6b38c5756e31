package rbac

import (
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// AggregatedRules returns the rules role should hold under its
// aggregationRule, as kube-controller-manager's ClusterRole aggregation
// computes them: for each selector in turn, the ClusterRoles of all whose
// labels it matches, by name, role itself excepted; each rule once, in the
// order first met. ok is false when role has no aggregationRule (its rules are
// its own). An invalid selector is an error.
//
// It is one step: when an aggregated ClusterRole is itself picked by another
// one's selectors, the caller computes again after each change, as the
// controller does on every ClusterRole event, until nothing changes.
func AggregatedRules(role *rbacv1.ClusterRole, all []*rbacv1.ClusterRole) (rules []rbacv1.PolicyRule, ok bool, err error) {
	if role.AggregationRule == nil {
		return nil, false, nil
	}
	byName := slices.Clone(all)
	slices.SortStableFunc(byName, func(a, b *rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
	rules = []rbacv1.PolicyRule{}
	for i := range role.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, true, err
		}
		for _, cr := range byName {
			if cr == nil || cr.Name == role.Name || !sel.Matches(labels.Set(cr.Labels)) {
				continue
			}
			for _, r := range cr.Rules {
				if !slices.ContainsFunc(rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, r) }) {
					rules = append(rules, r)
				}
			}
		}
	}
	return rules, true, nil
}
