package backgroundaudit

import (
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/admitd/admitd/internal/registry"
)

// notScanned are the groups whose objects are never scanned: admission
// configuration is exempt from the API's policies, and the reports are
// the scan's own output.
var notScanned = map[string]bool{
	admissionregistrationv1.GroupName: true,
	reportGroup:                       true,
}

// resourcesFor are the stored resources whose objects one of bs could
// match, each in its preferred version (every version of a resource is
// stored under one prefix, and matchPolicy Equivalent, the default, finds
// the policy's version from it). The test is by group, resource and the
// UPDATE operation of the policy's and binding's resourceRules, a superset
// of what matches: the plugin decides per object.
func resourcesFor(cat *registry.Catalogue, bs []auditBinding) []*registry.Resource {
	var out []*registry.Resource
	for _, r := range cat.Resources() {
		if !scannable(cat, r) {
			continue
		}
		for _, b := range bs {
			if mayMatch(b, r) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// scannable: a listable resource in the first version of its group's
// (preferred first) that serves it, not stored as another group's
// (events.k8s.io's events are core events).
func scannable(cat *registry.Catalogue, r *registry.Resource) bool {
	if notScanned[r.Group] || r.StoredAs != nil || !r.HasVerb("list") {
		return false
	}
	for _, v := range cat.Versions(r.Group) {
		gvr := r.GroupVersionResource
		gvr.Version = v
		if _, ok := cat.Lookup(gvr); ok {
			return v == r.Version
		}
	}
	return false
}

// mayMatch: the policy's matchConstraints and the binding's matchResources
// (when it has resourceRules) both have a rule for UPDATEs of r.
func mayMatch(b auditBinding, r *registry.Resource) bool {
	mc := b.policy.Spec.MatchConstraints
	if mc == nil || !anyRule(mc.ResourceRules, r) {
		return false
	}
	mr := b.binding.Spec.MatchResources
	return mr == nil || len(mr.ResourceRules) == 0 || anyRule(mr.ResourceRules, r)
}

func anyRule(rules []admissionregistrationv1.NamedRuleWithOperations, r *registry.Resource) bool {
	for _, rule := range rules {
		if ruleCovers(rule.RuleWithOperations, r) {
			return true
		}
	}
	return false
}

func ruleCovers(rule admissionregistrationv1.RuleWithOperations, r *registry.Resource) bool {
	if !slices.Contains(rule.Operations, admissionregistrationv1.Update) && !slices.Contains(rule.Operations, admissionregistrationv1.OperationAll) {
		return false
	}
	if !slices.Contains(rule.APIGroups, "*") && !slices.Contains(rule.APIGroups, r.Group) {
		return false
	}
	for _, res := range rule.Resources {
		name, sub, _ := strings.Cut(res, "/")
		if (name == "*" || name == r.Resource) && (sub == "" || sub == "*") {
			return true
		}
	}
	return false
}
