package rbac

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestCovers(t *testing.T) {
	withNames := func(r rbacv1.PolicyRule, names ...string) rbacv1.PolicyRule { r.ResourceNames = names; return r }
	urls := func(verbs []string, u ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{Verbs: verbs, NonResourceURLs: u}
	}
	tests := []struct {
		name          string
		owner, wanted []rbacv1.PolicyRule
		wantUncovered []rbacv1.PolicyRule
	}{
		{"nothing wanted", nil, nil, nil},
		{"exact", []rbacv1.PolicyRule{rule(l("get"), l(""), l("pods"))}, []rbacv1.PolicyRule{rule(l("get"), l(""), l("pods"))}, nil},
		{"split over owners",
			[]rbacv1.PolicyRule{rule(l("get"), l(""), l("pods")), rule(l("list"), l(""), l("pods"))},
			[]rbacv1.PolicyRule{rule(l("get", "list"), l(""), l("pods"))}, nil},
		{"missing verb",
			[]rbacv1.PolicyRule{rule(l("get"), l(""), l("pods"))},
			[]rbacv1.PolicyRule{rule(l("get", "delete"), l(""), l("pods"))},
			[]rbacv1.PolicyRule{rule(l("delete"), l(""), l("pods"))}},
		{"star is held, not matched",
			[]rbacv1.PolicyRule{rule(l("get", "list"), l(""), l("pods"))},
			[]rbacv1.PolicyRule{rule(l("*"), l(""), l("pods"))},
			[]rbacv1.PolicyRule{rule(l("*"), l(""), l("pods"))}},
		{"owner stars", []rbacv1.PolicyRule{rule(l("*"), l("*"), l("*"))},
			[]rbacv1.PolicyRule{rule(l("*"), l("x"), l("a/b", "*"))}, nil},
		{"*/subresource", []rbacv1.PolicyRule{rule(l("get"), l(""), l("*/status"))},
			[]rbacv1.PolicyRule{rule(l("get"), l(""), l("pods/status", "pods", "a/b/status"))},
			[]rbacv1.PolicyRule{rule(l("get"), l(""), l("pods")), rule(l("get"), l(""), l("a/b/status"))}},
		{"names: owner without names covers",
			[]rbacv1.PolicyRule{rule(l("get"), l(""), l("cm"))},
			[]rbacv1.PolicyRule{withNames(rule(l("get"), l(""), l("cm")), "a")}, nil},
		{"names: owner with names does not cover all",
			[]rbacv1.PolicyRule{withNames(rule(l("get"), l(""), l("cm")), "a")},
			[]rbacv1.PolicyRule{rule(l("get"), l(""), l("cm")), withNames(rule(l("get"), l(""), l("cm")), "a", "b")},
			[]rbacv1.PolicyRule{rule(l("get"), l(""), l("cm")), withNames(rule(l("get"), l(""), l("cm")), "b")}},
		{"urls", []rbacv1.PolicyRule{urls(l("get"), "/api/*", "/healthz")},
			[]rbacv1.PolicyRule{urls(l("get"), "/api/v1", "/api/*", "/healthz", "/healthz/x")},
			[]rbacv1.PolicyRule{urls(l("get"), "/healthz/x")}},
		{"resources without groups grant nothing", nil, []rbacv1.PolicyRule{rule(l("get"), nil, l("pods"))}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, uncovered := Covers(tc.owner, tc.wanted)
			if ok != (len(tc.wantUncovered) == 0) || !sameRules(uncovered, tc.wantUncovered) {
				t.Errorf("Covers(%v, %v) = %v, %v; want %v", tc.owner, tc.wanted, ok, uncovered, tc.wantUncovered)
			}
		})
	}
}

func sameRules(a, b []rbacv1.PolicyRule) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if CompactString(a[i]) != CompactString(b[i]) {
			return false
		}
	}
	return true
}

func TestConfirmNoEscalation(t *testing.T) {
	s := testPolicy()
	if err := ConfirmNoEscalation(s, as("alice"), "", []rbacv1.PolicyRule{rule(l("get"), l("apps"), l("deployments"))}); err != nil {
		t.Errorf("ConfirmNoEscalation(alice, get deployments) = %v, want nil", err)
	}
	wanted := []rbacv1.PolicyRule{
		rule(l("get", "delete", "create"), l(""), l("pods", "secrets")),
		{Verbs: l("get"), NonResourceURLs: l("/metrics")},
	}
	err := ConfirmNoEscalation(s, as("alice", "g1"), "ns1", wanted)
	want := `user "alice" (groups=["g1"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["pods"], Verbs:["delete" "create"]}
{APIGroups:[""], Resources:["secrets"], Verbs:["delete" "create"]}
{NonResourceURLs:["/metrics"], Verbs:["get"]}`
	if err == nil || err.Error() != want {
		t.Errorf("ConfirmNoEscalation(alice) = %v\nwant %s", err, want)
	}
	err = ConfirmNoEscalation(s, as("carol"), "", wanted[1:])
	if err == nil || !strings.HasSuffix(err.Error(),
		`; resolution errors: [clusterrole.rbac.authorization.k8s.io "no-such-clusterrole" not found]`) {
		t.Errorf("ConfirmNoEscalation(carol) = %v, want resolution errors at the end", err)
	}
}
