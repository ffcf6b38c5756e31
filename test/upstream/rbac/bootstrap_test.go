package rbac

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/kubernetes/pkg/registry/rbac/validation"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"

	"github.com/admitd/admitd/internal/auth"
)

// bootstrapPolicy is upstream's bootstrap policy, with the aggregated
// ClusterRoles (admin, edit, view, ...) filled in once, as the aggregation
// controller would.
func bootstrapPolicy() policy {
	var p policy
	for _, cr := range append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...) {
		p.clusterRoles = append(p.clusterRoles, &cr)
	}
	for _, crb := range append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...) {
		p.clusterRoleBindings = append(p.clusterRoleBindings, &crb)
	}
	for _, roles := range bootstrappolicy.NamespaceRoles() {
		for _, r := range roles {
			p.roles = append(p.roles, &r)
		}
	}
	for _, bindings := range bootstrappolicy.NamespaceRoleBindings() {
		for _, b := range bindings {
			p.roleBindings = append(p.roleBindings, &b)
		}
	}
	aggregate(p.clusterRoles)
	return p
}

// aggregate gives each ClusterRole with an aggregation rule the rules of the
// ClusterRoles whose labels its selectors match exactly (the bootstrap
// policy uses matchLabels only).
func aggregate(roles []*rbacv1.ClusterRole) {
	for _, agg := range roles {
		if agg.AggregationRule == nil {
			continue
		}
		for _, sel := range agg.AggregationRule.ClusterRoleSelectors {
			for _, r := range roles {
				if r != agg && matchLabels(sel.MatchLabels, r.Labels) {
					agg.Rules = append(agg.Rules, r.Rules...)
				}
			}
		}
	}
}

func matchLabels(want, have map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return len(want) > 0
}

// vocabulary gathers what the policy names: users from its subjects, and
// the groups, resources, verbs and URLs of its rules.
type vocabulary struct {
	users                                   []authenticationv1.UserInfo
	groups, resources, verbs, urls, rscName []string
	rules                                   []rbacv1.PolicyRule
}

func (p policy) vocabulary() vocabulary {
	v := vocabulary{users: []authenticationv1.UserInfo{
		{Username: "alice", Groups: []string{"system:authenticated"}},
		{Username: "system:anonymous", Groups: []string{"system:unauthenticated"}},
	}}
	addSubjects := func(ss []rbacv1.Subject, ns string) {
		for _, s := range ss {
			switch s.Kind {
			case rbacv1.UserKind:
				v.users = append(v.users, authenticationv1.UserInfo{Username: s.Name, Groups: []string{"system:authenticated"}})
			case rbacv1.GroupKind:
				v.users = append(v.users, authenticationv1.UserInfo{Username: "member-of-" + s.Name, Groups: []string{s.Name}})
			case rbacv1.ServiceAccountKind:
				if s.Namespace != "" {
					ns = s.Namespace
				}
				v.users = append(v.users, authenticationv1.UserInfo{Username: "system:serviceaccount:" + ns + ":" + s.Name,
					Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}})
			}
		}
	}
	for _, b := range p.clusterRoleBindings {
		addSubjects(b.Subjects, "")
	}
	for _, b := range p.roleBindings {
		addSubjects(b.Subjects, b.Namespace)
	}
	addRules := func(rules []rbacv1.PolicyRule) {
		v.rules = append(v.rules, rules...)
		for _, r := range rules {
			v.groups = append(v.groups, r.APIGroups...)
			v.resources = append(v.resources, r.Resources...)
			v.verbs = append(v.verbs, r.Verbs...)
			v.urls = append(v.urls, r.NonResourceURLs...)
			v.rscName = append(v.rscName, r.ResourceNames...)
		}
	}
	for _, r := range p.clusterRoles {
		addRules(r.Rules)
	}
	for _, r := range p.roles {
		addRules(r.Rules)
	}
	for _, s := range []*[]string{&v.groups, &v.resources, &v.verbs, &v.urls, &v.rscName} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
	}
	return v
}

// attributes makes a request of u: half the time from one rule of the
// policy (a request some role grants), otherwise from all it names.
func (v vocabulary) attributes(r *rand.Rand, u authenticationv1.UserInfo) auth.Attributes {
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	if r.IntN(2) == 0 {
		rule := v.rules[r.IntN(len(v.rules))]
		or := func(a, b []string) []string {
			if len(a) > 0 {
				return a
			}
			return b
		}
		v.groups, v.resources, v.verbs = or(rule.APIGroups, v.groups), or(rule.Resources, v.resources), or(rule.Verbs, v.verbs)
		v.urls, v.rscName = or(rule.NonResourceURLs, v.urls), or(rule.ResourceNames, v.rscName)
	}
	a := auth.Attributes{User: u, Verb: pick(v.verbs), Namespace: pick([]string{"", "default", "kube-system", "kube-public"})}
	if r.IntN(6) == 0 {
		a.Path = pick(v.urls)
		if r.IntN(2) == 0 {
			a.Path += "/x"
		}
		a.Path = strings.ReplaceAll(a.Path, "*", "y")
		return a
	}
	a.ResourceRequest = true
	a.APIGroup = pick(v.groups)
	a.Resource, a.Subresource, _ = strings.Cut(pick(v.resources), "/")
	if a.Resource == "*" {
		a.Resource = "widgets"
	}
	if r.IntN(4) == 0 {
		a.Name = pick(v.rscName)
	}
	return a
}

// TestBootstrapPolicy decides requests of every subject the bootstrap
// policy names, over the groups, resources, verbs and URLs it names.
func TestBootstrapPolicy(t *testing.T) {
	p := bootstrapPolicy()
	v := p.vocabulary()
	ours, static := p.ours(), p.static()
	r := rand.New(rand.NewPCG(3, 4))
	allowed, total := 0, 0
	for _, u := range v.users {
		for range 200 {
			if checkSame(t, "bootstrap", ours, static, v.attributes(r, u)) == auth.DecisionAllow {
				allowed++
			}
			total++
		}
	}
	t.Logf("%d users, %d bindings: %d of %d requests allowed", len(v.users),
		len(p.clusterRoleBindings)+len(p.roleBindings), allowed, total)
	if allowed < total/20 {
		t.Errorf("only %d of %d requests allowed: the test explores too little", allowed, total)
	}
}

// TestBootstrapRulesFor: the rules each bootstrap subject holds, in each
// namespace, are upstream's, in the order of upstream's static lists.
func TestBootstrapRulesFor(t *testing.T) {
	p := bootstrapPolicy()
	ours := p.ours()
	resolver, _ := validation.NewTestRuleResolver(p.roles, p.roleBindings, p.clusterRoles, p.clusterRoleBindings)
	for _, u := range p.vocabulary().users {
		for _, ns := range []string{"", "kube-system", "kube-public"} {
			got, err := ours.RulesFor(u, ns)
			want, uerr := resolver.RulesFor(nil, upstreamUser(u), ns)
			if fmt.Sprint(got) != fmt.Sprint(want) || (err == nil) != (uerr == nil) {
				t.Errorf("RulesFor(%s, %q) = %v, %v\nupstream: %v, %v", u.Username, ns, got, err, want, uerr)
			}
		}
	}
}
