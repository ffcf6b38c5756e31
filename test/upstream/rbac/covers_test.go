package rbac

import (
	"context"
	"fmt"
	"strings"
	"testing"

	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	helpers "k8s.io/component-helpers/auth/rbac/validation"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"
	"k8s.io/kubernetes/pkg/registry/rbac/validation"

	"github.com/admitd/admitd/internal/auth/rbac"
)

// TestCoversGenerated: coverage and the uncovered atoms, in order, are
// upstream's.
func TestCoversGenerated(t *testing.T) {
	g := newGen(5)
	covered := 0
	const n = 20000
	for range n {
		owner, wanted := g.rules(), g.rules()
		if g.r.IntN(3) == 0 { // a subset of owner's own rules is often covered
			wanted = owner[:g.r.IntN(len(owner)+1)]
		}
		ok, missing := rbac.Covers(owner, wanted)
		uok, umissing := helpers.Covers(owner, wanted)
		if ok != uok || fmt.Sprint(missing) != fmt.Sprint(umissing) {
			t.Fatalf("Covers(%v, %v) = %v, %v\nupstream: %v, %v", owner, wanted, ok, missing, uok, umissing)
		}
		if ok {
			covered++
		}
	}
	t.Logf("%d of %d covered", covered, n)
	if covered < n/10 || covered > n*9/10 {
		t.Errorf("%d of %d covered: the generator explores too little", covered, n)
	}
}

// TestConfirmNoEscalationGenerated: the escalation check refuses the same
// writes as upstream's, with the same message.
func TestConfirmNoEscalationGenerated(t *testing.T) {
	g := newGen(9)
	refused := 0
	const n = 3000
	for i := range n {
		p := g.policy(1 + g.r.IntN(10))
		ours, resolver := p.ours(), p.listers(t).resolver()
		u, ns := g.user(), g.pick(append([]string{""}, vNamespaces...))
		wanted := g.rules()
		if g.r.IntN(2) == 0 {
			wanted, _ = ours.RulesFor(u, ns)
			wanted = wanted[:g.r.IntN(len(wanted)+1)]
			wanted = append(wanted, g.rules()[:g.r.IntN(2)]...)
		}
		err := rbac.ConfirmNoEscalation(ours, u, ns, wanted)
		ctx := genericapirequest.WithNamespace(genericapirequest.WithUser(context.Background(), upstreamUser(u)), ns)
		uerr := validation.ConfirmNoEscalation(ctx, resolver, wanted)
		if (err == nil) != (uerr == nil) {
			t.Fatalf("policy %d: ConfirmNoEscalation(%s, %q, %v) = %v\nupstream: %v", i, u.Username, ns, wanted, err, uerr)
		}
		if err == nil {
			continue
		}
		refused++
		msg, errs, _ := strings.Cut(err.Error(), "; resolution errors: ")
		umsg, uerrs, _ := strings.Cut(uerr.Error(), "; resolution errors: ")
		if msg != umsg || !sameErrors(errs, uerrs) {
			t.Fatalf("policy %d: ConfirmNoEscalation(%s, %q, %v) =\n%v\nupstream:\n%v", i, u.Username, ns, wanted, err, uerr)
		}
	}
	t.Logf("%d of %d writes refused", refused, n)
	if refused < n/10 || refused > n*9/10 {
		t.Errorf("%d of %d refused: the generator explores too little", refused, n)
	}
}

// TestCompactString prints rules as upstream's escalation messages do.
func TestCompactString(t *testing.T) {
	g := newGen(11)
	for range 2000 {
		r := g.rule()
		if got, want := rbac.CompactString(r), rbacv1helpers.CompactString(r); got != want {
			t.Fatalf("CompactString(%v) = %s, upstream %s", r, got, want)
		}
	}
}
