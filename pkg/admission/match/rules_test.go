package match_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

// req is a request for the rule vectors: ns "" means cluster-scoped.
type req struct {
	op             admission.Operation
	ns             string
	group, version string
	resource, sub  string
}

func (q req) String() string {
	return fmt.Sprintf("%s %s/%s %s/%s ns=%q", q.op, q.group, q.version, q.resource, q.sub, q.ns)
}

func (q req) attrs() *admission.Attributes {
	op := q.op
	if op == "" {
		op = admission.Create
	}
	return attrs(op, q.ns, "name", gvr(q.group, q.version, q.resource), q.sub, gvk(q.group, q.version, "k"+q.resource))
}

// nsd and cls are namespaced and cluster-scoped requests of g/v.
func nsd(res, sub string) req {
	return req{ns: "ns", group: "g", version: "v", resource: res, sub: sub}
}
func cls(res, sub string) req { return req{group: "g", version: "v", resource: res, sub: sub} }

func namespaces(ns, sub string) req {
	return req{ns: ns, version: "v1", resource: "namespaces", sub: sub}
}

// TestRuleVectors runs upstream's rules_test.go cases
// (k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules/rules_test.go) through
// whole rules whose other fields are wildcards.
func TestRuleVectors(t *testing.T) {
	withOps := func(ops ...string) v1.RuleWithOperations { return rule(ops, all(), all(), []string{"*/*"}, "") }
	withRes := func(res ...string) v1.RuleWithOperations { return rule(all(), all(), all(), res, "") }
	withScope := func(s string) v1.RuleWithOperations { return rule(all(), all(), all(), []string{"*/*"}, s) }
	at := func(op admission.Operation) req { q := nsd("r", ""); q.op = op; return q }
	gv := func(g, v string) req { q := nsd("r", ""); q.group, q.version = g, v; return q }
	tests := []struct {
		name    string
		rule    v1.RuleWithOperations
		match   []req
		noMatch []req
	}{
		{"resources *", withRes("*"), []req{nsd("r", ""), {ns: "ns", group: "2", version: "v", resource: "r2"}},
			[]req{nsd("r", "exec"), nsd("r2", "proxy")}},
		{"resources r/*", withRes("r/*"), []req{nsd("r", ""), nsd("r", "exec")},
			[]req{nsd("r2", ""), nsd("r2", "proxy")}},
		{"resources r/* r2", withRes("r/*", "r2"), []req{nsd("r", ""), nsd("r", "exec"), nsd("r2", "")},
			[]req{nsd("r2", "proxy")}},
		{"resources */proxy */exec", withRes("*/proxy", "*/exec"), []req{nsd("r", "exec"), nsd("r2", "proxy"), nsd("r3", "proxy")},
			[]req{nsd("r", ""), nsd("r2", ""), nsd("r4", "scale")}},
		{"resources */*", withRes("*/*"), []req{nsd("r", ""), nsd("r", "status")}, nil},
		{"resources pods/status", withRes("pods/status"), []req{nsd("pods", "status")},
			[]req{nsd("pods", ""), nsd("pods", "exec"), nsd("nodes", "status")}},
		{"resources */status", withRes("*/status"), []req{nsd("pods", "status"), cls("nodes", "status")},
			[]req{nsd("pods", ""), nsd("pods", "exec")}},
		{"resources empty", withRes(), nil, []req{nsd("r", "")}},
		{"scope Cluster", withScope("Cluster"),
			[]req{cls("r", ""), cls("r", "exec"), namespaces("", ""), namespaces("", "finalize"), namespaces("ns", ""), namespaces("ns", "finalize")},
			[]req{nsd("r", ""), nsd("r", "exec")}},
		{"scope Namespaced", withScope("Namespaced"), []req{nsd("r", ""), nsd("r", "exec")},
			[]req{namespaces("", ""), namespaces("", "finalize"), namespaces("ns", ""), namespaces("ns", "finalize"), cls("r", ""), cls("r", "exec")}},
		{"scope *", withScope("*"),
			[]req{nsd("r", ""), nsd("r", "exec"), cls("r", ""), cls("r", "exec"), namespaces("", ""), namespaces("ns", "finalize")}, nil},
		{"scope unknown", withScope("Galaxy"), nil, []req{nsd("r", ""), cls("r", "")}},
		{"operations *", withOps("*"), []req{at(admission.Create), at(admission.Update), at(admission.Delete), at(admission.Connect)}, nil},
		{"operations CREATE", withOps("CREATE"), []req{at(admission.Create)},
			[]req{at(admission.Update), at(admission.Delete), at(admission.Connect)}},
		{"operations CONNECT", withOps("CONNECT"), []req{at(admission.Connect)},
			[]req{at(admission.Create), at(admission.Update), at(admission.Delete)}},
		{"operations UPDATE DELETE", withOps("UPDATE", "DELETE"), []req{at(admission.Update), at(admission.Delete)},
			[]req{at(admission.Create), at(admission.Connect)}},
		{"operations empty", withOps(), nil, []req{at(admission.Create)}},
		{"groups g1 g2", rule(all(), []string{"g1", "g2"}, all(), all(), ""), []req{gv("g1", "v"), gv("g2", "v2")},
			[]req{gv("g3", "v"), gv("g4", "v")}},
		{"versions v1 v2", rule(all(), all(), []string{"v1", "v2"}, all(), ""), []req{gv("g1", "v1"), gv("g2", "v2")},
			[]req{gv("g1", "v3"), gv("g2", "v4")}},
		{"core group", rule(all(), []string{""}, all(), all(), ""), []req{gv("", "v1")}, []req{gv("apps", "v1")}},
	}
	env := match.Env{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := match.Webhook([]v1.RuleWithOperations{tt.rule}, nil, everything, everything)
			for _, q := range tt.match {
				if d := matchOne(t, env, c, q.attrs()); d.Reason != match.Matched {
					t.Errorf("Match(%v) = %v, want Matched", q, d.Reason)
				}
			}
			for _, q := range tt.noMatch {
				if d := matchOne(t, env, c, q.attrs()); d.Reason == match.Matched {
					t.Errorf("Match(%v) = Matched, want a skip", q)
				}
			}
		})
	}
}

// TestSkipReasons checks the trace reasons of rule misses.
func TestSkipReasons(t *testing.T) {
	namespaced := rule(all(), all(), all(), all(), "Namespaced")
	tests := []struct {
		name string
		c    *match.Criteria
		q    req
		want match.Reason
	}{
		{"scope", match.Webhook([]v1.RuleWithOperations{namespaced}, nil, everything, everything), cls("r", ""), match.SkipScope},
		{"rule", match.Webhook([]v1.RuleWithOperations{rule(all(), all(), all(), []string{"x"}, "")}, nil, everything, everything), cls("r", ""), match.SkipRule},
		{"no rules", match.Webhook(nil, nil, everything, everything), cls("r", ""), match.SkipRule},
		{"resource name", match.Policy(&v1.MatchResources{
			NamespaceSelector: everything, ObjectSelector: everything,
			ResourceRules: []v1.NamedRuleWithOperations{{ResourceNames: []string{"other"}, RuleWithOperations: rule(all(), all(), all(), all(), "")}},
		}), cls("r", ""), match.SkipResourceName},
		{"exclude", match.Policy(&v1.MatchResources{
			NamespaceSelector: everything, ObjectSelector: everything,
			ResourceRules:        []v1.NamedRuleWithOperations{{RuleWithOperations: rule(all(), all(), all(), all(), "")}},
			ExcludeResourceRules: []v1.NamedRuleWithOperations{{RuleWithOperations: rule(all(), all(), all(), []string{"r"}, "")}},
		}), cls("r", ""), match.SkipExcludeRule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := matchOne(t, match.Env{}, tt.c, tt.q.attrs()); d.Reason != tt.want {
				t.Errorf("Match(%v) = %v, want %v", tt.q, d.Reason, tt.want)
			}
		})
	}
	for r := match.Matched; r <= match.Errored+1; r++ {
		if r.String() == "" {
			t.Errorf("Reason(%d).String() is empty", r)
		}
	}
}
