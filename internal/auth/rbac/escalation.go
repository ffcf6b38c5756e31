package rbac

import (
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// RuleResolver finds the rules bound to a user in a namespace ("" for the
// cluster scope). The error reports role references that could not be
// resolved; the rules returned are valid regardless. Snapshot and Authorizer
// implement it.
type RuleResolver interface {
	RulesFor(user authenticationv1.UserInfo, namespace string) ([]rbacv1.PolicyRule, error)
}

// ConfirmNoEscalation returns nil when the rules bound to user in namespace
// cover rules, the rules a role write would grant (or, for a binding, the
// rules of the role it binds). Otherwise its error lists what is missing in
// kube-apiserver's words:
//
//	user "alice" (groups=["g"]) is attempting to grant RBAC permissions not currently held:
//	{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}
//
// followed by "; resolution errors: [...]" when some of user's bindings could
// not be resolved. The caller answers it as a 403 Forbidden on the object
// written, and skips the check for users allowed to escalate or bind.
func ConfirmNoEscalation(r RuleResolver, user authenticationv1.UserInfo, namespace string, rules []rbacv1.PolicyRule) error {
	owner, resolveErr := r.RulesFor(user, namespace)
	ok, missing := Covers(owner, rules)
	if ok {
		return nil
	}
	var lines []string
	for _, m := range compactRules(missing) {
		lines = append(lines, CompactString(m))
	}
	slices.Sort(lines)
	lines = slices.Compact(lines)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s",
		user.Username, user.Groups, strings.Join(lines, "\n"))
	if resolveErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", []error{resolveErr})
	}
	return &EscalationError{msg: msg, Missing: missing}
}

// EscalationError is ConfirmNoEscalation's error.
type EscalationError struct {
	msg string
	// Missing lists the atoms of the requested rules that the user does not
	// hold, as Covers returns them.
	Missing []rbacv1.PolicyRule
}

func (e *EscalationError) Error() string { return e.msg }

// compactRules merges atoms that differ only in their verb, keeping the
// first atom's place and the verbs' order. Non-resource atoms are kept as
// they are. It expects Breakdown's output.
func compactRules(atoms []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type key struct {
		group, resource string
		named           bool
		name            string
	}
	var out []rbacv1.PolicyRule
	at := map[key]int{}
	for _, a := range atoms {
		if len(a.NonResourceURLs) > 0 || len(a.APIGroups) != 1 || len(a.Resources) != 1 || len(a.ResourceNames) > 1 {
			out = append(out, a)
			continue
		}
		k := key{group: a.APIGroups[0], resource: a.Resources[0], named: len(a.ResourceNames) == 1}
		if k.named {
			k.name = a.ResourceNames[0]
		}
		if i, ok := at[k]; ok {
			out[i].Verbs = append(out[i].Verbs, a.Verbs...)
			continue
		}
		at[k] = len(out)
		a.Verbs = slices.Clone(a.Verbs)
		out = append(out, a)
	}
	return out
}

// CompactString prints rule as kube-apiserver's escalation messages do:
// only the fields that are set, each as a list of quoted strings, e.g.
// {APIGroups:[""], Resources:["pods"], Verbs:["get"]}.
func CompactString(rule rbacv1.PolicyRule) string {
	var parts []string
	field := func(name string, values []string) {
		if len(values) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", name, values))
		}
	}
	field("APIGroups", rule.APIGroups)
	field("Resources", rule.Resources)
	field("NonResourceURLs", rule.NonResourceURLs)
	field("ResourceNames", rule.ResourceNames)
	field("Verbs", rule.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}
