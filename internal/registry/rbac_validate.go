package registry

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of the four RBAC kinds, as kube-apiserver 1.37 reports it
// (upstream pkg/apis/rbac/validation and the declarative rules of
// k8s.io/api/rbac/v1). Metadata is checked generically (pipeline.go).
//
// Three checks are declarative in 1.37 and enforced by default (the
// DeclarativeValidationBeta gate): a rule's verbs, a subject's name and a
// roleRef's name are required. kube-apiserver reports those errors after
// all the others, and without a detail ("rules[0].verbs: Required value").
// On update the declarative rules skip a list that did not change, and
// never reach a roleRef (it is immutable): the handwritten error then
// stands in its own place, with its own detail.

var (
	rulesPath                = field.NewPath("rules")
	roleRefPath              = field.NewPath("roleRef")
	subjectsPath             = field.NewPath("subjects")
	aggregationSelectorsPath = field.NewPath("aggregationRule", "clusterRoleSelectors")
)

// rbacErrors are a write's errors in the order kube-apiserver reports them:
// the handwritten checks, then those the declarative rules took over.
type rbacErrors struct {
	handwritten field.ErrorList
	declarative field.ErrorList
}

func (e *rbacErrors) add(errs ...*field.Error) { e.handwritten = append(e.handwritten, errs...) }

// required reports a missing value at path: as a declarative error when
// the declarative rule checks it, else in place with detail.
func (e *rbacErrors) required(path *field.Path, detail string, declarative bool) {
	if declarative {
		e.declarative = append(e.declarative, field.Required(path, ""))
		return
	}
	e.add(field.Required(path, detail))
}

func (e *rbacErrors) list() field.ErrorList {
	return append(e.handwritten, e.declarative...)
}

// rbacName is the rule for the name of a role or binding, and of the role
// a binding refers to: any name usable as a path segment. A generateName
// prefix is held to the same rule.
func rbacName(name string, _ bool) []string { return content.IsPathSegmentName(name) }

func roleStrategy() Strategy {
	return Strategy{
		Validate: func(obj runtime.Object) field.ErrorList {
			return validateRules(obj.(*rbacv1.Role).Rules, true, true)
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			rules, oldRules := obj.(*rbacv1.Role).Rules, old.(*rbacv1.Role).Rules
			return validateRules(rules, true, !equality.Semantic.DeepEqual(rules, oldRules))
		},
	}
}

func clusterRoleStrategy() Strategy {
	return Strategy{
		Validate: func(obj runtime.Object) field.ErrorList {
			return validateClusterRole(obj.(*rbacv1.ClusterRole), nil)
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			return validateClusterRole(obj.(*rbacv1.ClusterRole), old.(*rbacv1.ClusterRole))
		},
	}
}

func roleBindingStrategy() Strategy {
	return Strategy{
		Default: defaultRoleBinding,
		Validate: func(obj runtime.Object) field.ErrorList {
			rb := obj.(*rbacv1.RoleBinding)
			return validateBinding(rb.RoleRef, rb.Subjects, nil, true)
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			rb, oldRB := obj.(*rbacv1.RoleBinding), old.(*rbacv1.RoleBinding)
			return validateBinding(rb.RoleRef, rb.Subjects, &bindingBefore{oldRB.RoleRef, oldRB.Subjects}, true)
		},
	}
}

func clusterRoleBindingStrategy() Strategy {
	return Strategy{
		Default: defaultClusterRoleBinding,
		Validate: func(obj runtime.Object) field.ErrorList {
			crb := obj.(*rbacv1.ClusterRoleBinding)
			return validateBinding(crb.RoleRef, crb.Subjects, nil, false)
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			crb, oldCRB := obj.(*rbacv1.ClusterRoleBinding), old.(*rbacv1.ClusterRoleBinding)
			return validateBinding(crb.RoleRef, crb.Subjects, &bindingBefore{oldCRB.RoleRef, oldCRB.Subjects}, false)
		},
	}
}

// validateRules checks the rules of a Role (namespaced) or ClusterRole;
// declarative says whether the declarative rules check them (always on
// create; on update when they changed).
func validateRules(rules []rbacv1.PolicyRule, namespaced, declarative bool) field.ErrorList {
	var errs rbacErrors
	checkRules(&errs, rules, namespaced, declarative)
	return errs.list()
}

func checkRules(errs *rbacErrors, rules []rbacv1.PolicyRule, namespaced, declarative bool) {
	for i := range rules {
		checkRule(errs, &rules[i], namespaced, declarative, rulesPath.Index(i))
	}
}

// checkRule: every rule names verbs; a rule either covers non-resource
// URLs (only in a ClusterRole, and nothing else) or names API groups and
// resources.
func checkRule(errs *rbacErrors, rule *rbacv1.PolicyRule, namespaced, declarative bool, path *field.Path) {
	if len(rule.Verbs) == 0 {
		errs.required(path.Child("verbs"), "verbs must contain at least one value", declarative)
	}
	if len(rule.NonResourceURLs) > 0 {
		urls := path.Child("nonResourceURLs")
		if namespaced {
			errs.add(field.Invalid(urls, rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
			errs.add(field.Invalid(urls, rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return
	}
	if len(rule.APIGroups) == 0 {
		errs.add(field.Required(path.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(rule.Resources) == 0 {
		errs.add(field.Required(path.Child("resources"), "resource rules must supply at least one resource"))
	}
}

// validateClusterRole checks rules and aggregationRule (old is nil on
// create). An update may keep label values a selector of the old role
// already had that are no longer valid.
func validateClusterRole(role, old *rbacv1.ClusterRole) field.ErrorList {
	var errs rbacErrors
	declarative := old == nil || !equality.Semantic.DeepEqual(role.Rules, old.Rules)
	checkRules(&errs, role.Rules, false, declarative)
	if role.AggregationRule != nil {
		opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: old != nil && hasInvalidSelector(old)}
		errs.add(checkAggregation(role.AggregationRule, opts)...)
	}
	return errs.list()
}

func checkAggregation(rule *rbacv1.AggregationRule, opts metav1validation.LabelSelectorValidationOptions) field.ErrorList {
	var errs field.ErrorList
	if len(rule.ClusterRoleSelectors) == 0 {
		errs = append(errs, field.Required(aggregationSelectorsPath, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
	}
	for i := range rule.ClusterRoleSelectors {
		sel := &rule.ClusterRoleSelectors[i]
		errs = append(errs, metav1validation.ValidateLabelSelector(sel, opts, aggregationSelectorsPath.Index(i))...)
		if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
			// kube-apiserver shows the selector it failed to build: none.
			errs = append(errs, field.Invalid(aggregationSelectorsPath.Index(i), nil, "invalid label selector."))
		}
	}
	return errs
}

// hasInvalidSelector reports whether any aggregation selector of role
// fails today's rules.
func hasInvalidSelector(role *rbacv1.ClusterRole) bool {
	if role.AggregationRule == nil {
		return false
	}
	for i := range role.AggregationRule.ClusterRoleSelectors {
		if len(metav1validation.ValidateLabelSelector(&role.AggregationRule.ClusterRoleSelectors[i], metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
			return true
		}
	}
	return false
}

// bindingBefore is the stored binding an update replaces.
type bindingBefore struct {
	roleRef  rbacv1.RoleRef
	subjects []rbacv1.Subject
}

// roleRefValue is how kube-apiserver shows a roleRef in an error: its
// internal type, which has no JSON names.
type roleRefValue struct{ APIGroup, Kind, Name string }

// validateBinding checks a RoleBinding (namespaced) or ClusterRoleBinding
// (old is nil on create): the role it refers to, its subjects, and on
// update that the roleRef did not change.
func validateBinding(ref rbacv1.RoleRef, subjects []rbacv1.Subject, old *bindingBefore, namespaced bool) field.ErrorList {
	var errs, refErrs rbacErrors
	checkRoleRef(&refErrs, ref, namespaced, old == nil)
	errs.add(refErrs.handwritten...)
	subjectsChecked := old == nil || !equality.Semantic.DeepEqual(subjects, old.subjects)
	for i := range subjects {
		checkSubject(&errs, &subjects[i], namespaced, subjectsChecked, subjectsPath.Index(i))
	}
	if old != nil && ref != old.roleRef {
		errs.add(field.Invalid(roleRefPath, roleRefValue(ref), apivalidation.FieldImmutableErrorMsg).WithOrigin("immutable"))
	}
	// The declarative rules check subjects before the roleRef.
	errs.declarative = append(errs.declarative, refErrs.declarative...)
	return errs.list()
}

// checkRoleRef: a binding refers to an RBAC role by a valid name: a Role
// or ClusterRole from a RoleBinding, a ClusterRole from a
// ClusterRoleBinding.
func checkRoleRef(errs *rbacErrors, ref rbacv1.RoleRef, namespaced, declarative bool) {
	if ref.APIGroup != rbacv1.GroupName {
		errs.add(field.NotSupported(roleRefPath.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	if ref.Kind != "ClusterRole" && (!namespaced || ref.Kind != "Role") {
		errs.add(field.NotSupported(roleRefPath.Child("kind"), ref.Kind, kinds))
	}
	name := roleRefPath.Child("name")
	if ref.Name == "" {
		errs.required(name, "", declarative)
		return
	}
	for _, msg := range rbacName(ref.Name, false) {
		errs.add(field.Invalid(name, ref.Name, msg))
	}
}

// checkSubject: a subject is a ServiceAccount (a valid name, the core
// group, and a namespace when bound cluster-wide), a User or a Group (the
// RBAC group); every subject has a name.
func checkSubject(errs *rbacErrors, s *rbacv1.Subject, namespaced, declarative bool, path *field.Path) {
	if s.Name == "" {
		errs.required(path.Child("name"), "", declarative)
	}
	group := path.Child("apiGroup")
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Name != "" {
			for _, msg := range apivalidation.ValidateServiceAccountName(s.Name, false) {
				errs.add(field.Invalid(path.Child("name"), s.Name, msg))
			}
		}
		if s.APIGroup != "" {
			errs.add(field.NotSupported(group, s.APIGroup, []string{""}))
		}
		if !namespaced && s.Namespace == "" {
			errs.add(field.Required(path.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != rbacv1.GroupName {
			errs.add(field.NotSupported(group, s.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		errs.add(field.NotSupported(path.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
}
