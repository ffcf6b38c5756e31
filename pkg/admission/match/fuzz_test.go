package match_test

import (
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

var (
	fuzzOnce   sync.Once
	fuzzOracle *oracle
)

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// FuzzRule compiles a rule from arbitrary strings (comma-separated lists)
// and matches it against an arbitrary request, comparing with upstream's
// ShouldCallHook (selectors {}, so only rules and matchPolicy decide) and
// checking the index over the compiled criteria.
func FuzzRule(f *testing.F) {
	f.Add("*", "*", "*", "*/*", "", uint8(0), "CREATE", "apps", "v1", "deployments", "", "ns", "name")
	f.Add("UPDATE,DELETE", "apps,extensions", "v1beta1", "deployments,deployments/scale", "*", uint8(2), "UPDATE", "apps", "v1", "deployments", "scale", "ns", "name")
	f.Add("CONNECT", "", "v1", "pods/*", "Namespaced", uint8(1), "CONNECT", "", "v1", "pods", "exec", "ns", "p")
	f.Add("*", "", "v1", "*/status", "Cluster", uint8(0), "UPDATE", "", "v1", "namespaces", "status", "ns1", "ns1")
	f.Add("*", "example.com", "v1", "widgets", "", uint8(2), "CREATE", "example.com", "v2", "widgets", "", "", "w")
	f.Add("", "*", "*", "pods/", "Galaxy", uint8(0), "", "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, ops, groups, versions, resources, scope string, policy uint8,
		op, group, version, resource, sub, ns, name string) {
		fuzzOnce.Do(func() { fuzzOracle = newOracle(t, deploymentsMapper()) })
		r := rule(splitList(ops), splitList(groups), splitList(versions), splitList(resources), scope)
		mp := []*v1.MatchPolicyType{nil, ptr(v1.Exact), ptr(v1.Equivalent)}[int(policy)%3]
		h := &v1.ValidatingWebhook{Rules: []v1.RuleWithOperations{r}, MatchPolicy: mp,
			NamespaceSelector: everything, ObjectSelector: everything}
		a := attrs(admission.Operation(op), ns, name, gvr(group, version, resource), sub, gvk(group, version, "K"))
		env := match.Env{Equivalents: deploymentsMapper()}
		c := match.Webhook(h.Rules, h.MatchPolicy, h.NamespaceSelector, h.ObjectSelector)
		got := ours(matchOne(t, env, c, a), false)
		if want := fuzzOracle.webhook(h, a); got != want {
			t.Fatalf("Match(%s, %s) = %+v, upstream %+v", dump(h), dump(a), got, want)
		}
		cs := []*match.Criteria{c, match.Webhook(nil, nil, everything, everything), c}
		checkIndex(t, match.NewIndex(cs), cs, env, a)
	})
}
