package admissionregistration

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// API validation of admissionregistration.k8s.io/v1 shared by the webhook
// configurations and the admission policies: rules, match resources, param
// kinds and references, validation actions (upstream
// pkg/apis/admissionregistration/validation/validation.go). Lists of
// supported values are in the order upstream prints them (sorted, except
// where upstream spells a list out).

var (
	failurePolicyValues      = []string{"Fail", "Ignore"}
	matchPolicyValues        = []string{"Equivalent", "Exact"}
	ruleScopeValues          = []string{"*", "Cluster", "Namespaced"}
	operationValues          = []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}
	mutatingOperationValues  = []string{"*", "CONNECT", "CREATE", "UPDATE"}
	reinvocationPolicyValues = []string{"IfNeeded", "Never"}
	sideEffectValues         = []string{"None", "NoneOnDryRun", "Some", "Unknown"}
	noSideEffectValues       = []string{"None", "NoneOnDryRun"}
	validationReasonValues   = []string{"Forbidden", "Invalid", "RequestEntityTooLarge"}
	validationActionValues   = []string{"Audit", "Deny", "Warn"}
	patchTypeValues          = []string{"ApplyConfiguration", "JSONPatch"}
	// notFoundActionValues is spelled out upstream, not sorted.
	notFoundActionValues = []string{"Deny", "Allow"}
	// mapReinvocationValues is the order MutatingAdmissionPolicy reports.
	mapReinvocationValues = []string{"Never", "IfNeeded"}
)

// staticConfigSuffix marks names reserved for manifest-based configurations
// (feature ManifestBasedAdmissionControlConfig, on by default in 1.37).
const staticConfigSuffix = ".static.k8s.io"

// validateReservedName rejects, on create, a name only static manifests may
// use.
func validateReservedName(name string) field.ErrorList {
	if !strings.HasSuffix(name, staticConfigSuffix) {
		return nil
	}
	return field.ErrorList{field.Invalid(metadataPath.Child("name"), name,
		fmt.Sprintf("names ending with %q are reserved for static manifest-based configurations and cannot be managed via the API", staticConfigSuffix))}
}

func containsWildcard[S ~string](values []S) bool {
	return slices.Contains(values, "*")
}

func supported[S ~string](values []string, v S) bool {
	return slices.Contains(values, string(v))
}

// validateRuleWithOperations checks one rule of a webhook or policy.
func validateRuleWithOperations(r *v1.RuleWithOperations, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	ops := fldPath.Child("operations")
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(ops, ""))
	}
	if len(r.Operations) > 1 && containsWildcard(r.Operations) {
		errs = append(errs, field.Invalid(ops, r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		if !supported(operationValues, op) {
			errs = append(errs, field.NotSupported(ops.Index(i), op, operationValues))
		}
	}
	return append(errs, validateRule(&r.Rule, fldPath)...)
}

func validateRule(r *v1.Rule, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	groups, versions := fldPath.Child("apiGroups"), fldPath.Child("apiVersions")
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(groups, ""))
	}
	if len(r.APIGroups) > 1 && containsWildcard(r.APIGroups) {
		errs = append(errs, field.Invalid(groups, r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	// The core group is "", so empty groups are fine; empty versions are not.
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(versions, ""))
	}
	if len(r.APIVersions) > 1 && containsWildcard(r.APIVersions) {
		errs = append(errs, field.Invalid(versions, r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(versions.Index(i), ""))
		}
	}
	errs = append(errs, validateRuleResources(r.Resources, fldPath.Child("resources"))...)
	if r.Scope != nil && !supported(ruleScopeValues, *r.Scope) {
		errs = append(errs, field.NotSupported(fldPath.Child("scope"), *r.Scope, ruleScopeValues))
	}
	return errs
}

// validateRuleResources checks resources that may name subresources:
// "*/*" stands alone, "*" does not mix with bare resources, "x/*" makes
// "x/y" redundant and so does "*/y".
func validateRuleResources(resources []string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(fldPath, ""))
	}
	allSubs := map[string]bool{}    // x of "x/*"
	allParents := map[string]bool{} // y of "*/y"
	var doubleWildcard, singleWildcard, bare bool
	for i, r := range resources {
		if r == "" {
			errs = append(errs, field.Required(fldPath.Index(i), ""))
			continue
		}
		doubleWildcard = doubleWildcard || r == "*/*"
		singleWildcard = singleWildcard || r == "*"
		res, sub, hasSub := strings.Cut(r, "/")
		if !hasSub {
			// Upstream keeps only the last bare entry's verdict.
			bare = r != "*"
			continue
		}
		if allSubs[res] {
			errs = append(errs, field.Invalid(fldPath.Index(i), r, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, r)))
		}
		if allParents[sub] {
			errs = append(errs, field.Invalid(fldPath.Index(i), r, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, r)))
		}
		if sub == "*" {
			allSubs[res] = true
		}
		if res == "*" {
			allParents[sub] = true
		}
	}
	if len(resources) > 1 && doubleWildcard {
		errs = append(errs, field.Invalid(fldPath, resources, "if '*/*' is present, must not specify other resources"))
	}
	if singleWildcard && bare {
		errs = append(errs, field.Invalid(fldPath, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

// validateLabelSelector checks a selector; lenient allows label values that
// strict validation rejects (objects stored before the rule tightened).
func validateLabelSelector(s *metav1.LabelSelector, lenient bool, fldPath *field.Path) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: lenient}
	return metav1validation.ValidateLabelSelector(s, opts, fldPath)
}

// validateMatchResources checks a policy's matchConstraints or a binding's
// matchResources; defaulting fills the required fields.
func validateMatchResources(mr *v1.MatchResources, fldPath *field.Path) field.ErrorList {
	if mr == nil {
		return nil
	}
	var errs field.ErrorList
	switch {
	case mr.MatchPolicy == nil:
		errs = append(errs, field.Required(fldPath.Child("matchPolicy"), ""))
	case !supported(matchPolicyValues, *mr.MatchPolicy):
		errs = append(errs, field.NotSupported(fldPath.Child("matchPolicy"), *mr.MatchPolicy, matchPolicyValues))
	}
	for _, sel := range []struct {
		name string
		s    *metav1.LabelSelector
	}{{"namespaceSelector", mr.NamespaceSelector}, {"objectSelector", mr.ObjectSelector}} {
		if sel.s == nil {
			errs = append(errs, field.Required(fldPath.Child(sel.name), ""))
		} else {
			// Always strict: these types came after label values were tightened.
			errs = append(errs, validateLabelSelector(sel.s, false, fldPath.Child(sel.name))...)
		}
	}
	for i := range mr.ResourceRules {
		errs = append(errs, validateNamedRule(&mr.ResourceRules[i], fldPath.Child("resourceRules").Index(i))...)
	}
	for i := range mr.ExcludeResourceRules {
		errs = append(errs, validateNamedRule(&mr.ExcludeResourceRules[i], fldPath.Child("excludeResourceRules").Index(i))...)
	}
	return errs
}

func validateNamedRule(r *v1.NamedRuleWithOperations, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, name := range r.ResourceNames {
		p := fldPath.Child("resourceNames").Index(i)
		for _, msg := range content.IsPathSegmentName(name) {
			errs = append(errs, field.Invalid(p, name, msg))
		}
		if seen[name] {
			errs = append(errs, field.Duplicate(p, name))
		}
		seen[name] = true
	}
	return append(errs, validateRuleWithOperations(&r.RuleWithOperations, fldPath)...)
}

// validateMutatingOperations rejects operations a mutating policy cannot
// act on (DELETE). Upstream reports them without an index.
func validateMutatingOperations(mr *v1.MatchResources, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range mr.ResourceRules {
		for _, op := range r.Operations {
			if !supported(mutatingOperationValues, op) {
				errs = append(errs, field.NotSupported(fldPath, op, mutatingOperationValues))
			}
		}
	}
	return errs
}

func validateParamKind(pk *v1.ParamKind, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	apiVersion := fldPath.Child("apiVersion")
	switch group, version, err := splitGroupVersion(pk.APIVersion); {
	case pk.APIVersion == "":
		errs = append(errs, field.Required(apiVersion, ""))
	case err != nil:
		errs = append(errs, field.Invalid(apiVersion, pk.APIVersion, err.Error()))
	default:
		if group != "" {
			if msgs := utilvalidation.IsDNS1123Subdomain(group); len(msgs) > 0 {
				errs = append(errs, field.Invalid(apiVersion, group, strings.Join(msgs, ",")))
			}
		}
		if version == "" {
			errs = append(errs, field.Invalid(apiVersion, pk.APIVersion, "version must be specified"))
		} else if msgs := utilvalidation.IsDNS1035Label(version); len(msgs) > 0 {
			errs = append(errs, field.Invalid(apiVersion, version, strings.Join(msgs, ",")))
		}
	}
	if pk.Kind == "" {
		errs = append(errs, field.Required(fldPath.Child("kind"), ""))
	} else if msgs := utilvalidation.IsDNS1035Label(strings.ToLower(pk.Kind)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(fldPath.Child("kind"), pk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

// splitGroupVersion parses "group/version" or "version"; "" and "/" are the
// empty group version.
func splitGroupVersion(gv string) (group, version string, err error) {
	if gv == "" || gv == "/" {
		return "", "", nil
	}
	switch strings.Count(gv, "/") {
	case 0:
		return "", gv, nil
	case 1:
		group, version, _ = strings.Cut(gv, "/")
		return group, version, nil
	}
	return "", "", fmt.Errorf("unexpected GroupVersion string: %v", gv)
}

func validateParamRef(pr *v1.ParamRef, fldPath *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var errs field.ErrorList
	const exclusive = "name and selector are mutually exclusive"
	if pr.Name != "" {
		for _, msg := range content.IsPathSegmentName(pr.Name) {
			errs = append(errs, field.Invalid(fldPath.Child("name"), pr.Name, msg))
		}
		if pr.Selector != nil {
			errs = append(errs, field.Forbidden(fldPath.Child("name"), exclusive))
		}
	}
	if pr.Selector != nil {
		errs = append(errs, validateLabelSelector(pr.Selector, false, fldPath.Child("selector"))...)
		if pr.Name != "" {
			errs = append(errs, field.Forbidden(fldPath.Child("selector"), exclusive))
		}
	}
	if pr.Name == "" && pr.Selector == nil {
		errs = append(errs, field.Required(fldPath, "one of name or selector must be specified"))
	}
	switch a := pr.ParameterNotFoundAction; {
	case a == nil || *a == "":
		errs = append(errs, field.Required(fldPath.Child("parameterNotFoundAction"), ""))
	case !supported(notFoundActionValues, *a):
		// Upstream reports the pointer; it prints as the quoted value.
		errs = append(errs, field.NotSupported(fldPath.Child("parameterNotFoundAction"), a, notFoundActionValues))
	}
	return errs
}

func validateValidationActions(actions []v1.ValidationAction, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[v1.ValidationAction]bool{}
	for i, a := range actions {
		if !supported(validationActionValues, a) {
			errs = append(errs, field.NotSupported(fldPath.Index(i), a, validationActionValues))
		}
		if seen[a] {
			errs = append(errs, field.Duplicate(fldPath.Index(i), a))
		}
		seen[a] = true
	}
	if seen[v1.Deny] && seen[v1.Warn] {
		errs = append(errs, field.Invalid(fldPath, actions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(seen) == 0 {
		errs = append(errs, field.Required(fldPath, "at least one validation action is required"))
	}
	return errs
}

// validatePolicyName checks a binding's reference to its policy.
func validatePolicyName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(fldPath, name, msg))
	}
	return errs
}

func validateFailurePolicy(fp *v1.FailurePolicyType, fldPath *field.Path) field.ErrorList {
	switch {
	case fp == nil:
		return field.ErrorList{field.Required(fldPath, "")}
	case !supported(failurePolicyValues, *fp):
		return field.ErrorList{field.NotSupported(fldPath, *fp, failurePolicyValues)}
	}
	return nil
}

// validateQualifiedName is core validation's qualified-name rule.
func validateQualifiedName(value string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(value) {
		errs = append(errs, field.Invalid(fldPath, value, msg))
	}
	return errs
}
