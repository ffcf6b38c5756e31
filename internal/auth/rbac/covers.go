package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Covers reports whether ownerRules permit everything requested permits, as
// kube-apiserver's escalation check decides it. The requested rules are split
// into atoms of one API group, resource, verb and resource name (or one
// non-resource URL and verb); uncovered lists, in order, the atoms no single
// owner rule covers. A rule with resources but no API groups yields no
// atoms, so it is always covered.
func Covers(ownerRules, requested []rbacv1.PolicyRule) (covered bool, uncovered []rbacv1.PolicyRule) {
	uncovered = []rbacv1.PolicyRule{}
	for _, r := range requested {
		for _, atom := range Breakdown(r) {
			if !anyCovers(ownerRules, &atom) {
				uncovered = append(uncovered, atom)
			}
		}
	}
	return len(uncovered) == 0, uncovered
}

// Breakdown splits rule into equivalent rules of one API group, resource,
// verb and at most one resource name each, followed by rules of one
// non-resource URL and verb each.
func Breakdown(rule rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, g := range rule.APIGroups {
		for _, res := range rule.Resources {
			for _, v := range rule.Verbs {
				atom := rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}}
				if len(rule.ResourceNames) == 0 {
					out = append(out, atom)
					continue
				}
				for _, n := range rule.ResourceNames {
					named := atom
					named.ResourceNames = []string{n}
					out = append(out, named)
				}
			}
		}
	}
	for _, u := range rule.NonResourceURLs {
		for _, v := range rule.Verbs {
			out = append(out, rbacv1.PolicyRule{NonResourceURLs: []string{u}, Verbs: []string{v}})
		}
	}
	return out
}

func anyCovers(owners []rbacv1.PolicyRule, atom *rbacv1.PolicyRule) bool {
	for i := range owners {
		if ruleCovers(&owners[i], atom) {
			return true
		}
	}
	return false
}

// ruleCovers reports whether owner permits all of atom, an element of a
// Breakdown. Unlike RuleAllows, a "*" in atom is a value to be held, not a
// wildcard: only an owner "*" covers it.
func ruleCovers(owner, atom *rbacv1.PolicyRule) bool {
	return starOrAll(owner.Verbs, atom.Verbs, rbacv1.VerbAll) &&
		starOrAll(owner.APIGroups, atom.APIGroups, rbacv1.APIGroupAll) &&
		resourcesCover(owner.Resources, atom.Resources) &&
		urlsCover(owner.NonResourceURLs, atom.NonResourceURLs) &&
		namesCover(owner.ResourceNames, atom.ResourceNames)
}

func starOrAll(owner, want []string, star string) bool {
	return contains(owner, star) || containsAll(owner, want)
}

// resourcesCover: each wanted resource is in owner, or owner holds "*", or
// the wanted one is "resource/sub" and owner holds "*/sub".
func resourcesCover(owner, want []string) bool {
	if contains(owner, rbacv1.ResourceAll) {
		return true
	}
	for _, w := range want {
		if contains(owner, w) {
			continue
		}
		_, sub, ok := strings.Cut(w, "/")
		if !ok || !contains(owner, "*/"+sub) {
			return false
		}
	}
	return true
}

func urlsCover(owner, want []string) bool {
	for _, w := range want {
		covered := false
		for _, o := range owner {
			if urlCovers(o, w) {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

// namesCover: an owner without names covers any; an owner with names covers
// only atoms naming one of them, never an atom without a name.
func namesCover(owner, want []string) bool {
	if len(owner) == 0 {
		return true
	}
	return len(want) > 0 && containsAll(owner, want)
}

func contains(set []string, s string) bool {
	for _, e := range set {
		if e == s {
			return true
		}
	}
	return false
}

func containsAll(set, want []string) bool {
	for _, w := range want {
		if !contains(set, w) {
			return false
		}
	}
	return true
}
