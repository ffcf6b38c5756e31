package rbac

import (
	"context"
	"fmt"
	"testing"

	"github.com/admitd/admitd/internal/auth"
)

// TestAuthorizeGenerated compares decisions, and the reasons of allows, with
// upstream's authorizer over its static lists, and the reasons of "no
// opinion" with upstream's authorizer over informer listers, whose errors
// kube-apiserver reports.
func TestAuthorizeGenerated(t *testing.T) {
	const policies, requests = 400, 60
	g := newGen(1)
	count := map[auth.Decision]int{}
	withErrors := 0
	for i := range policies {
		p := g.policy(1 + g.r.IntN(25))
		ours, static, listed := p.ours(), p.static(), p.listers(t).authorizer()
		for range requests {
			a := g.attributes()
			d := checkSame(t, fmt.Sprint("policy ", i), ours, static, a)
			count[d]++
			if d == auth.DecisionAllow {
				continue
			}
			_, reason, _ := ours.Authorize(context.Background(), a)
			_, ureason, _ := listed.Authorize(context.Background(), upstreamAttributes(a))
			if !sameErrors(reason, ureason) {
				t.Fatalf("policy %d: Authorize(%+v) reason %q; upstream's listers say %q", i, a, reason, ureason)
			}
			if reason != "" {
				withErrors++
			}
		}
	}
	t.Logf("decisions: %d allowed, %d no opinion (%d with resolution errors)", count[auth.DecisionAllow], count[auth.DecisionNoOpinion], withErrors)
	if total := policies * requests; count[auth.DecisionAllow] < total/20 || count[auth.DecisionAllow] > total*9/10 || withErrors < total/50 {
		t.Errorf("the generator explores too little: %v of %d, %d with errors", count, total, withErrors)
	}
}

// TestRulesReviewGenerated: the rules a SelfSubjectRulesReview shows are
// upstream's RBAC authorizer's, in the order of its static lists.
func TestRulesReviewGenerated(t *testing.T) {
	g := newGen(23)
	shown := 0
	for i := range 500 {
		p := g.policy(1 + g.r.IntN(15))
		ours, static := p.ours(), p.static()
		for range 10 {
			u, ns := g.user(), g.pick(append([]string{""}, vNamespaces...))
			res, nonRes, incomplete, err := ours.RulesReview(u, ns)
			ures, unonRes, uincomplete, uerr := static.RulesFor(context.Background(), upstreamUser(u), ns)
			var wantRes, wantNonRes []string
			for _, r := range ures {
				wantRes = append(wantRes, fmt.Sprint(r.GetVerbs(), r.GetAPIGroups(), r.GetResources(), r.GetResourceNames()))
			}
			for _, r := range unonRes {
				wantNonRes = append(wantNonRes, fmt.Sprint(r.GetVerbs(), r.GetNonResourceURLs()))
			}
			var gotRes, gotNonRes []string
			for _, r := range res {
				gotRes = append(gotRes, fmt.Sprint(r.Verbs, r.APIGroups, r.Resources, r.ResourceNames))
			}
			for _, r := range nonRes {
				gotNonRes = append(gotNonRes, fmt.Sprint(r.Verbs, r.NonResourceURLs))
			}
			if fmt.Sprint(gotRes, gotNonRes) != fmt.Sprint(wantRes, wantNonRes) || incomplete != uincomplete || (err == nil) != (uerr == nil) {
				t.Fatalf("policy %d: RulesReview(%v, %q) = %v, %v, %v, %v\nupstream: %v, %v, %v, %v",
					i, u, ns, gotRes, gotNonRes, incomplete, err, wantRes, wantNonRes, uincomplete, uerr)
			}
			shown += len(res) + len(nonRes)
		}
	}
	if shown < 1000 {
		t.Errorf("only %d rules shown: the generator explores too little", shown)
	}
}
