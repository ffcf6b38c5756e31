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
