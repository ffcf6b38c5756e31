package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/admitd/admitd/internal/auth"
)

// RuleAllows reports whether rule permits the action a describes.
//
// A resource request needs its verb, API group, resource and name to match.
// The resource is matched as "resource/subresource" when there is a
// subresource, which a rule may also name as "*/subresource"; a rule without
// resourceNames matches any name. A non-resource request needs its verb and
// path to match a nonResourceURL, exactly or by a prefix ending in "*".
func RuleAllows(a auth.Attributes, rule *rbacv1.PolicyRule) bool {
	if !hasOrStar(rule.Verbs, a.Verb, rbacv1.VerbAll) {
		return false
	}
	if !a.ResourceRequest {
		return urlMatches(rule.NonResourceURLs, a.Path)
	}
	return hasOrStar(rule.APIGroups, a.APIGroup, rbacv1.APIGroupAll) &&
		resourceMatches(rule.Resources, a.Resource, a.Subresource) &&
		nameMatches(rule.ResourceNames, a.Name)
}

// RulesAllow reports whether any of rules permits a.
func RulesAllow(a auth.Attributes, rules ...rbacv1.PolicyRule) bool {
	for i := range rules {
		if RuleAllows(a, &rules[i]) {
			return true
		}
	}
	return false
}

func hasOrStar(set []string, want, star string) bool {
	for _, s := range set {
		if s == star || s == want {
			return true
		}
	}
	return false
}

func resourceMatches(ruleResources []string, resource, subresource string) bool {
	combined := resource
	if subresource != "" {
		combined += "/" + subresource
	}
	for _, r := range ruleResources {
		if r == rbacv1.ResourceAll || r == combined {
			return true
		}
		if subresource != "" && r == "*/"+subresource {
			return true
		}
	}
	return false
}

func nameMatches(names []string, name string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

func urlMatches(ruleURLs []string, path string) bool {
	for _, u := range ruleURLs {
		if urlCovers(u, path) {
			return true
		}
	}
	return false
}

// urlCovers reports whether the rule URL u names path: "*" names every path,
// a trailing "*" (or several) makes u a prefix.
func urlCovers(u, path string) bool {
	if u == rbacv1.NonResourceAll || u == path {
		return true
	}
	return strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimRight(u, "*"))
}
