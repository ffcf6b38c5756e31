package registry

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A ResourceQuota's scopes and scope selector, as upstream's
// validateResourceQuotaScopes and validateScopeSelector: each scope must be
// known and fit every standard resource the quota limits, a selector's
// operator must fit its scope, and no quota may hold both halves of a
// pair (BestEffort and NotBestEffort, Terminating and NotTerminating).

var knownQuotaScopes = sets.New(corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
	corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopePriorityClass,
	corev1.ResourceQuotaScopeVolumeAttributesClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity)

// existsOnlyScopes are the scopes a selector may only test with Exists.
var existsOnlyScopes = sets.New(corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
	corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity)

var conflictingQuotaScopes = [][2]corev1.ResourceQuotaScope{
	{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort},
	{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating},
}

var (
	podComputeQuotaResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceLimitsCPU,
		corev1.ResourceLimitsMemory, corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory)
	claimQuotaResources = sets.New(corev1.ResourcePersistentVolumeClaims, corev1.ResourceRequestsStorage)
)

// scopeFitsResource says whether a quota with scope may limit name.
func scopeFitsResource(scope corev1.ResourceQuotaScope, name corev1.ResourceName) bool {
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return name == corev1.ResourcePods || podComputeQuotaResources.Has(name)
	case corev1.ResourceQuotaScopeBestEffort:
		return name == corev1.ResourcePods
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return claimQuotaResources.Has(name)
	}
	return true
}

// misfits counts the standard resources of hard that scope may not limit
// (upstream reports one error for each).
func misfits(scope corev1.ResourceQuotaScope, hard corev1.ResourceList) int {
	n := 0
	for _, name := range sortedResourceNames(hard) {
		if isQuotaResource(name) && !scopeFitsResource(scope, name) {
			n++
		}
	}
	return n
}

func hasConflictingScopes(scopes sets.Set[corev1.ResourceQuotaScope]) int {
	n := 0
	for _, pair := range conflictingQuotaScopes {
		if scopes.HasAll(pair[0], pair[1]) {
			n++
		}
	}
	return n
}

func validateQuotaScopes(spec *corev1.ResourceQuotaSpec) field.ErrorList {
	if len(spec.Scopes) == 0 {
		return nil
	}
	var errs field.ErrorList
	p := quotaSpecPath.Child("scopes")
	for _, scope := range spec.Scopes {
		if !knownQuotaScopes.Has(scope) {
			errs = append(errs, field.Invalid(p, spec.Scopes, "unsupported scope"))
		}
		for range misfits(scope, spec.Hard) {
			errs = append(errs, field.Invalid(p, spec.Scopes, "unsupported scope applied to resource"))
		}
	}
	for range hasConflictingScopes(sets.New(spec.Scopes...)) {
		errs = append(errs, field.Invalid(p, spec.Scopes, "conflicting scopes"))
	}
	return errs
}

func validateQuotaScopeSelector(spec *corev1.ResourceQuotaSpec) field.ErrorList {
	var errs field.ErrorList
	p := quotaSpecPath.Child("scopeSelector", "matchExpressions")
	used := sets.New[corev1.ResourceQuotaScope]()
	for _, req := range spec.ScopeSelector.MatchExpressions {
		if !knownQuotaScopes.Has(req.ScopeName) {
			errs = append(errs, field.Invalid(p.Child("scopeName"), req.ScopeName, "unsupported scope"))
		}
		for range misfits(req.ScopeName, spec.Hard) {
			errs = append(errs, field.Invalid(p, internalScopeSelectorOf(spec.ScopeSelector), "unsupported scope applied to resource"))
		}
		errs = append(errs, validateScopeOperator(req, p)...)
		used.Insert(req.ScopeName)
	}
	for range hasConflictingScopes(used) {
		// upstream shows the quota's scopes here, not the selector's
		errs = append(errs, field.Invalid(p, spec.Scopes, "conflicting scopes"))
	}
	return errs
}

func validateScopeOperator(req corev1.ScopedResourceSelectorRequirement, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if existsOnlyScopes.Has(req.ScopeName) && req.Operator != corev1.ScopeSelectorOpExists {
		errs = append(errs, field.Invalid(p.Child("operator"), req.Operator,
			"must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
	}
	switch req.Operator {
	case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
		if len(req.Values) == 0 {
			errs = append(errs, field.Required(p.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
		}
	case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
		if len(req.Values) != 0 {
			errs = append(errs, field.Invalid(p.Child("values"), req.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
		}
	default:
		errs = append(errs, field.Invalid(p.Child("operator"), req.Operator, "not a valid selector operator"))
	}
	return errs
}

// internalScopeSelector is a scope selector as upstream's error shows it:
// its internal type, whose fields have no JSON names and no omitempty.
type internalScopeSelector struct {
	MatchExpressions []internalScopeRequirement
}

type internalScopeRequirement struct {
	ScopeName corev1.ResourceQuotaScope
	Operator  corev1.ScopeSelectorOperator
	Values    []string
}

func internalScopeSelectorOf(sel *corev1.ScopeSelector) *internalScopeSelector {
	out := &internalScopeSelector{}
	for _, req := range sel.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, internalScopeRequirement{req.ScopeName, req.Operator, slices.Clone(req.Values)})
	}
	return out
}
