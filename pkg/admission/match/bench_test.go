package match_test

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

// The benchmarks measure the matching scenarios upstream's chain is
// benchmarked in, so that the figures compare: N
// validating webhooks as the API defaults them (matchPolicy Equivalent,
// selectors {}), CREATE on one core resource, and a ConfigMap CREATE in a
// namespace without labels.

func coreCatalogue() runtime.EquivalentResourceRegistry {
	m := runtime.NewEquivalentResourceRegistry()
	m.RegisterKindFor(gvr("", "v1", "configmaps"), "", gvk("", "v1", "ConfigMap"))
	m.RegisterKindFor(gvr("", "v1", "secrets"), "", gvk("", "v1", "Secret"))
	return m
}

func benchHooks(n int, resource string, nsSel *metav1.LabelSelector) []*match.Criteria {
	cs := make([]*match.Criteria, n)
	for i := range cs {
		rules := []v1.RuleWithOperations{rule([]string{"CREATE"}, []string{""}, []string{"v1"}, []string{resource}, "*")}
		cs[i] = match.Webhook(rules, ptr(v1.Equivalent), nsSel, everything)
	}
	return cs
}

func benchRequest() *admission.Attributes {
	a := attrs(admission.Create, "bench", "cm1", gvr("", "v1", "configmaps"), "", gvk("", "v1", "ConfigMap"))
	a.Object = labelled(map[string]string{"app": "bench"})
	return a
}

// runIndex is what a dispatcher does per request: look the candidates up
// and match each one.
func runIndex(b *testing.B, ix *match.Index, cs []*match.Criteria, env match.Env, a *admission.Attributes, freshRecord bool) {
	ctx := context.Background()
	buf := make([]int32, 0, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if freshRecord {
			a.Record = admission.NewRecord()
		}
		r := match.NewRequest(ctx, env, a)
		for _, i := range ix.Candidates(&r, buf[:0]) {
			if d := cs[i].Match(&r); d.Reason == match.Matched {
				b.Fatalf("criteria %d matched", i)
			}
		}
	}
}

func BenchmarkIndex_2000NoMatch(b *testing.B) {
	cs := benchHooks(2000, "secrets", everything)
	env := match.Env{Namespaces: newNamespaces(namespaceObj("bench", nil)), Equivalents: coreCatalogue()}
	runIndex(b, match.NewIndex(cs), cs, env, benchRequest(), false)
}

// BenchmarkIndex_2000NamespaceSelectorExcludes builds a new Record per
// request, so each iteration pays for one namespace read.
func BenchmarkIndex_2000NamespaceSelectorExcludes(b *testing.B) {
	cs := benchHooks(2000, "configmaps", &metav1.LabelSelector{MatchLabels: map[string]string{"team": "other"}})
	env := match.Env{Namespaces: newNamespaces(namespaceObj("bench", nil)), Equivalents: coreCatalogue()}
	runIndex(b, match.NewIndex(cs), cs, env, benchRequest(), true)
}

// BenchmarkMatch_One matches one webhook whose rules and both selectors
// select the request (the namespace already read for this request).
func BenchmarkMatch_One(b *testing.B) {
	c := match.Webhook([]v1.RuleWithOperations{
		rule([]string{"UPDATE"}, []string{"apps"}, []string{"v1"}, []string{"deployments"}, "Namespaced"),
		rule([]string{"CREATE", "UPDATE"}, []string{""}, []string{"v1"}, []string{"secrets", "configmaps"}, "Namespaced"),
	}, ptr(v1.Equivalent),
		&metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
		&metav1.LabelSelector{MatchLabels: map[string]string{"app": "bench"}})
	env := match.Env{Namespaces: newNamespaces(namespaceObj("bench", map[string]string{"env": "prod"})), Equivalents: coreCatalogue()}
	a := benchRequest()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r := match.NewRequest(ctx, env, a)
		if d := c.Match(&r); d.Reason != match.Matched {
			b.Fatalf("Match = %v (%v)", d.Reason, d.Err)
		}
	}
}

// BenchmarkIndex_2000DistinctNamespaceSelectorsExclude is the unfavourable
// case: every webhook has its own namespaceSelector, none selecting.
func BenchmarkIndex_2000DistinctNamespaceSelectorsExclude(b *testing.B) {
	cs := make([]*match.Criteria, 2000)
	for i := range cs {
		rules := []v1.RuleWithOperations{rule([]string{"CREATE"}, []string{""}, []string{"v1"}, []string{"configmaps"}, "*")}
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{"team": fmt.Sprintf("other-%d", i)}}
		cs[i] = match.Webhook(rules, ptr(v1.Equivalent), sel, everything)
	}
	env := match.Env{Namespaces: newNamespaces(namespaceObj("bench", nil)), Equivalents: coreCatalogue()}
	runIndex(b, match.NewIndex(cs), cs, env, benchRequest(), true)
}
