package match_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

func ours(d match.Decision, policy bool) result {
	switch d.Reason {
	case match.Matched:
		r := result{matched: true, resource: d.Resource, sub: d.Subresource, kind: d.Kind}
		if policy {
			r.sub = "" // upstream's policy matcher does not return it
		}
		return r
	case match.Errored:
		return errResult(d.Err)
	}
	return result{}
}

// checkIndex asserts the index invariants for one request: candidates are
// strictly increasing positions, and every criteria left out would have
// been skipped without error.
func checkIndex(t *testing.T, ix *match.Index, cs []*match.Criteria, env match.Env, a *admission.Attributes) {
	t.Helper()
	r := match.NewRequest(context.Background(), env, a)
	cands := ix.Candidates(&r, nil)
	next := 0
	for k, i := range cands {
		if k > 0 && cands[k-1] >= i {
			t.Fatalf("Candidates = %v, not strictly increasing", cands)
		}
		for ; next < int(i); next++ {
			if d := cs[next].Match(&r); d.Reason == match.Matched || d.Reason == match.Errored {
				t.Fatalf("criteria %d left out by the index but Match = %v (%v) for %+v", next, d.Reason, d.Err, a)
			}
		}
		next = int(i) + 1
	}
	for ; next < len(cs); next++ {
		if d := cs[next].Match(&r); d.Reason == match.Matched || d.Reason == match.Errored {
			t.Fatalf("criteria %d left out by the index but Match = %v (%v) for %+v", next, d.Reason, d.Err, a)
		}
	}
}

const diffBatches, diffBatch, diffRequests = 60, 30, 30 // 54,000 comparisons each

// TestDifferentialWebhook compares Webhook criteria with upstream's
// ShouldCallHook (without matchConditions) on random inputs, and checks the
// index over the same criteria.
func TestDifferentialWebhook(t *testing.T) {
	mapper := deploymentsMapper()
	orc := newOracle(t, mapper)
	env := match.Env{Namespaces: newNamespaces(oracleNamespaces...), Equivalents: mapper}
	g := gen{rand.New(rand.NewPCG(1, 37))}
	stats, equivalent := map[match.Reason]int{}, 0
	for range diffBatches {
		raw := make([]*v1.ValidatingWebhook, diffBatch)
		hooks := make([]*match.Criteria, diffBatch)
		for i := range raw {
			raw[i] = g.webhook()
			hooks[i] = match.Webhook(raw[i].Rules, raw[i].MatchPolicy, raw[i].NamespaceSelector, raw[i].ObjectSelector)
		}
		ix := match.NewIndex(hooks)
		for range diffRequests {
			a, ok := g.attrs()
			if !ok || a.Namespace == "broken" {
				continue
			}
			for i, h := range raw {
				r := match.NewRequest(context.Background(), env, a)
				d := hooks[i].Match(&r)
				stats[d.Reason]++
				if d.Equivalent {
					equivalent++
				}
				if got, want := ours(d, false), orc.webhook(h, a); got != want {
					t.Fatalf("Match(%s, %s) = %+v, upstream %+v", dump(h), dump(a), got, want)
				}
			}
			checkIndex(t, ix, hooks, env, a)
		}
	}
	t.Logf("reasons: %v, %d matched through an equivalent resource", stats, equivalent)
	if equivalent == 0 {
		t.Errorf("no case matched through an equivalent resource")
	}
	for _, r := range []match.Reason{match.Matched, match.Errored, match.SkipRule, match.SkipNamespaceSelector, match.SkipObjectSelector} {
		if stats[r] == 0 {
			t.Errorf("no case ended with %v: the generator needs widening", r)
		}
	}
}

// TestDifferentialPolicy compares Policy and Binding criteria with
// upstream's DefinitionMatches and BindingMatches.
func TestDifferentialPolicy(t *testing.T) {
	mapper := deploymentsMapper()
	orc := newOracle(t, mapper)
	env := match.Env{Namespaces: newNamespaces(oracleNamespaces...), Equivalents: mapper}
	g := gen{rand.New(rand.NewPCG(2, 37))}
	stats, equivalent := map[match.Reason]int{}, 0
	for range diffBatches {
		raw := make([]*policyCase, diffBatch)
		cs := make([]*match.Criteria, 0, 2*diffBatch)
		for i := range raw {
			mr := g.matchResources()
			raw[i] = &policyCase{mr: mr, def: match.Policy(mr), bind: match.Binding(mr)}
			cs = append(cs, raw[i].def, raw[i].bind)
		}
		ix := match.NewIndex(cs)
		for range diffRequests {
			a, ok := g.attrs()
			if !ok {
				continue
			}
			for _, pc := range raw {
				r := match.NewRequest(context.Background(), env, a)
				d := pc.def.Match(&r)
				stats[d.Reason]++
				if d.Equivalent {
					equivalent++
				}
				if got, want := ours(d, true), orc.definition(pc.mr, a); got != want {
					t.Fatalf("Policy(%s).Match(%s) = %+v, upstream %+v", dump(pc.mr), dump(a), got, want)
				}
				got := ours(pc.bind.Match(&r), true)
				got.resource, got.kind = schema.GroupVersionResource{}, schema.GroupVersionKind{}
				if want := orc.binding(pc.mr, a); got != want {
					t.Fatalf("Binding(%s).Match(%s) = %+v, upstream %+v", dump(pc.mr), dump(a), got, want)
				}
			}
			checkIndex(t, ix, cs, env, a)
		}
	}
	t.Logf("reasons: %v, %d matched through an equivalent resource", stats, equivalent)
	if equivalent == 0 {
		t.Errorf("no case matched through an equivalent resource")
	}
	for _, r := range []match.Reason{match.Matched, match.Errored, match.SkipRule, match.SkipExcludeRule, match.SkipResourceName, match.SkipScope} {
		if stats[r] == 0 {
			t.Errorf("no case ended with %v: the generator needs widening", r)
		}
	}
}

type policyCase struct {
	mr        *v1.MatchResources
	def, bind *match.Criteria
}

// dump renders a configuration or request for a failure message.
func dump(v any) string {
	if a, ok := v.(*admission.Attributes); ok {
		c := *a
		c.Record = nil
		v = c
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
