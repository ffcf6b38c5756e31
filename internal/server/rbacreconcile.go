package server

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/auth/rbac"
)

// The reconciliation of the bootstrap policy into objects that already
// exist, with upstream's rules (k8s.io/component-helpers' rbac
// reconciliation, without removing anything): an object annotated
// rbac.authorization.kubernetes.io/autoupdate=false is left alone; otherwise
// it gains the labels and annotations it lacks, the rules it does not cover,
// the aggregation selectors it lacks (its aggregationRule goes when the
// bootstrap role has none), and a binding the subjects it lacks. A binding
// whose roleRef differs is left as it is (upstream deletes and recreates it).

// reconcileBootstrap is the apiserver.Reconcile of the bootstrap policy.
func reconcileBootstrap(existing, expected runtime.Object) runtime.Object {
	var changed bool
	switch e := existing.(type) {
	case *rbacv1.ClusterRole:
		want := expected.(*rbacv1.ClusterRole)
		if protected(e.Annotations) {
			return nil
		}
		changed = mergeMeta(&e.Labels, &e.Annotations, want.Labels, want.Annotations)
		changed = addMissingRules(&e.Rules, want.Rules) || changed
		changed = reconcileAggregation(e, want) || changed
	case *rbacv1.Role:
		want := expected.(*rbacv1.Role)
		if protected(e.Annotations) {
			return nil
		}
		changed = mergeMeta(&e.Labels, &e.Annotations, want.Labels, want.Annotations)
		changed = addMissingRules(&e.Rules, want.Rules) || changed
	case *rbacv1.ClusterRoleBinding:
		want := expected.(*rbacv1.ClusterRoleBinding)
		if protected(e.Annotations) || e.RoleRef != want.RoleRef {
			return nil
		}
		changed = mergeMeta(&e.Labels, &e.Annotations, want.Labels, want.Annotations)
		changed = addMissingSubjects(&e.Subjects, want.Subjects) || changed
	case *rbacv1.RoleBinding:
		want := expected.(*rbacv1.RoleBinding)
		if protected(e.Annotations) || e.RoleRef != want.RoleRef {
			return nil
		}
		changed = mergeMeta(&e.Labels, &e.Annotations, want.Labels, want.Annotations)
		changed = addMissingSubjects(&e.Subjects, want.Subjects) || changed
	}
	if !changed {
		return nil
	}
	return existing
}

func protected(annotations map[string]string) bool {
	return annotations[rbacv1.AutoUpdateAnnotationKey] == "false"
}

// mergeMeta adds the labels and annotations of want that are missing; the
// existing values win.
func mergeMeta(labels, annotations *map[string]string, wantLabels, wantAnnotations map[string]string) bool {
	return addMissingKeys(labels, wantLabels) || addMissingKeys(annotations, wantAnnotations)
}

func addMissingKeys(have *map[string]string, want map[string]string) bool {
	changed := false
	for k, v := range want {
		if _, ok := (*have)[k]; ok {
			continue
		}
		if *have == nil {
			*have = map[string]string{}
		}
		(*have)[k], changed = v, true
	}
	return changed
}

// addMissingRules appends the rules of want that have does not cover.
func addMissingRules(have *[]rbacv1.PolicyRule, want []rbacv1.PolicyRule) bool {
	covered, missing := rbac.Covers(*have, want)
	if covered {
		return false
	}
	*have = append(*have, missing...)
	return true
}

// reconcileAggregation adds the missing selectors of want's aggregation
// rule, or removes have's when want has none.
func reconcileAggregation(have, want *rbacv1.ClusterRole) bool {
	if want.AggregationRule == nil {
		if have.AggregationRule == nil {
			return false
		}
		have.AggregationRule = nil
		return true
	}
	if have.AggregationRule == nil {
		have.AggregationRule = &rbacv1.AggregationRule{}
	}
	changed := false
	for _, sel := range want.AggregationRule.ClusterRoleSelectors {
		if !slices.ContainsFunc(have.AggregationRule.ClusterRoleSelectors, func(s metav1.LabelSelector) bool { return equality.Semantic.DeepEqual(s, sel) }) {
			have.AggregationRule.ClusterRoleSelectors = append(have.AggregationRule.ClusterRoleSelectors, sel)
			changed = true
		}
	}
	return changed
}

// addMissingSubjects appends the subjects of want that have lacks.
func addMissingSubjects(have *[]rbacv1.Subject, want []rbacv1.Subject) bool {
	changed := false
	for _, s := range want {
		if !slices.Contains(*have, s) {
			*have = append(*have, s)
			changed = true
		}
	}
	return changed
}
