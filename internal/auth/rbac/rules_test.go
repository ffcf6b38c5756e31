package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/admitd/admitd/internal/auth"
)

func res(verb, group, resource, sub, name string) auth.Attributes {
	return auth.Attributes{ResourceRequest: true, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Name: name}
}

func path(verb, p string) auth.Attributes { return auth.Attributes{Verb: verb, Path: p} }

func rule(verbs, groups, resources []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources}
}

func l(s ...string) []string { return s }

func TestRuleAllows(t *testing.T) {
	named := rule(l("get"), l(""), l("configmaps"))
	named.ResourceNames = l("a", "b")
	urls := rbacv1.PolicyRule{Verbs: l("get"), NonResourceURLs: l("/healthz", "/apis/*", "/logs**")}
	tests := []struct {
		name  string
		rule  rbacv1.PolicyRule
		attrs auth.Attributes
		want  bool
	}{
		{"exact", rule(l("list"), l(""), l("pods")), res("list", "", "pods", "", ""), true},
		{"other verb", rule(l("list"), l(""), l("pods")), res("get", "", "pods", "", ""), false},
		{"other group", rule(l("list"), l(""), l("pods")), res("list", "apps", "pods", "", ""), false},
		{"verb star", rule(l("*"), l(""), l("pods")), res("delete", "", "pods", "", ""), true},
		{"group star", rule(l("get"), l("*"), l("pods")), res("get", "x.io", "pods", "", ""), true},
		{"resource star", rule(l("get"), l(""), l("*")), res("get", "", "pods", "log", ""), true},
		{"resource without subresource", rule(l("get"), l(""), l("pods")), res("get", "", "pods", "log", ""), false},
		{"resource/subresource", rule(l("get"), l(""), l("pods/log")), res("get", "", "pods", "log", ""), true},
		{"resource/subresource not the resource", rule(l("get"), l(""), l("pods/log")), res("get", "", "pods", "", ""), false},
		{"*/subresource", rule(l("get"), l(""), l("*/status")), res("get", "", "deployments", "status", ""), true},
		{"*/subresource other", rule(l("get"), l(""), l("*/status")), res("get", "", "deployments", "scale", ""), false},
		{"*/subresource no subresource", rule(l("get"), l(""), l("*/status")), res("get", "", "status", "", ""), false},
		{"*/ suffix only", rule(l("get"), l(""), l("*/xstatus")), res("get", "", "d", "status", ""), false},
		{"name listed", named, res("get", "", "configmaps", "", "b"), true},
		{"name not listed", named, res("get", "", "configmaps", "", "c"), false},
		{"names and no name", named, res("get", "", "configmaps", "", ""), false},
		{"url exact", urls, path("get", "/healthz"), true},
		{"url exact not prefix", urls, path("get", "/healthz/ready"), false},
		{"url prefix", urls, path("get", "/apis/apps"), true},
		{"url prefix self", urls, path("get", "/apis/"), true},
		{"url prefix without slash", urls, path("get", "/apis"), false},
		{"url double star", urls, path("get", "/logsX"), true},
		{"url verb", urls, path("post", "/healthz"), false},
		{"url star", rbacv1.PolicyRule{Verbs: l("*"), NonResourceURLs: l("*")}, path("get", "/anything"), true},
		{"url rule on resource", urls, res("get", "", "healthz", "", ""), false},
		{"resource rule on url", rule(l("*"), l("*"), l("*")), path("get", "/healthz"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RuleAllows(tc.attrs, &tc.rule); got != tc.want {
				t.Errorf("RuleAllows(%v, %+v) = %v, want %v", tc.rule, tc.attrs, got, tc.want)
			}
		})
	}
}

func TestRulesAllow(t *testing.T) {
	a := res("get", "", "pods", "", "")
	if RulesAllow(a) {
		t.Error("RulesAllow(no rules) = true, want false")
	}
	if !RulesAllow(a, rule(l("list"), l(""), l("pods")), rule(l("get"), l(""), l("pods"))) {
		t.Error("RulesAllow(list, get) = false, want true")
	}
}
