package rbac

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/admitd/admitd/internal/auth"
)

// policy is the input of a Snapshot, kept to scan it the slow way.
type policy struct {
	roles               []*rbacv1.Role
	clusterRoles        []*rbacv1.ClusterRole
	roleBindings        []*rbacv1.RoleBinding
	clusterRoleBindings []*rbacv1.ClusterRoleBinding
}

var (
	genNames  = l("a", "b", "c")
	genNS     = l("", "ns1", "ns2")
	genVerbs  = l("get", "list", "create", "*")
	genGroups = l("", "apps", "*")
	genRes    = l("pods", "pods/log", "*/status", "deployments", "*")
)

func pick(r *rand.Rand, from []string) string { return from[r.IntN(len(from))] }

func pickSome(r *rand.Rand, from []string) []string {
	var out []string
	for i := r.IntN(3); i >= 0; i-- {
		out = append(out, pick(r, from))
	}
	return out
}

func genRules(r *rand.Rand) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for i := r.IntN(3); i > 0; i-- {
		pr := rbacv1.PolicyRule{Verbs: pickSome(r, genVerbs)}
		if r.IntN(4) == 0 {
			pr.NonResourceURLs = pickSome(r, l("/healthz", "/api/*", "*"))
		} else {
			pr.APIGroups, pr.Resources = pickSome(r, genGroups), pickSome(r, genRes)
			if r.IntN(3) == 0 {
				pr.ResourceNames = pickSome(r, genNames)
			}
		}
		rules = append(rules, pr)
	}
	return rules
}

func genSubjects(r *rand.Rand) []rbacv1.Subject {
	var out []rbacv1.Subject
	for i := r.IntN(3); i >= 0; i-- {
		switch r.IntN(4) {
		case 0:
			out = append(out, user(pick(r, l("alice", "bob", "system:serviceaccount:ns1:a"))))
		case 1:
			out = append(out, group(pick(r, l("g1", "g2"))))
		case 2:
			out = append(out, sa(pick(r, genNS), pick(r, genNames)))
		default:
			out = append(out, rbacv1.Subject{Kind: "Other", Name: "alice"})
		}
	}
	return out
}

func genRef(r *rand.Rand) rbacv1.RoleRef {
	kind := pick(r, l("Role", "ClusterRole", "ClusterRole", "Bogus"))
	return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: pick(r, l("r1", "r2", "r3"))}
}

// genPolicy makes n bindings of random roles, subjects and rules over a
// small vocabulary, so that names collide often.
func genPolicy(r *rand.Rand, n int) policy {
	var p policy
	for _, name := range l("r1", "r2") {
		p.clusterRoles = append(p.clusterRoles, &rbacv1.ClusterRole{ObjectMeta: objectMeta("", name), Rules: genRules(r)})
		for _, ns := range genNS[1:] {
			p.roles = append(p.roles, &rbacv1.Role{ObjectMeta: objectMeta(ns, name), Rules: genRules(r)})
		}
	}
	for i := range n {
		if r.IntN(2) == 0 {
			b := crb(fmt.Sprint("crb", i), "", genSubjects(r)...)
			b.RoleRef = genRef(r)
			p.clusterRoleBindings = append(p.clusterRoleBindings, b)
			continue
		}
		b := rb(pick(r, genNS[1:]), fmt.Sprint("rb", i), "", "", genSubjects(r)...)
		b.RoleRef = genRef(r)
		p.roleBindings = append(p.roleBindings, b)
	}
	return p
}

func genAttributes(r *rand.Rand) auth.Attributes {
	a := auth.Attributes{
		User: authenticationv1.UserInfo{
			Username: pick(r, l("alice", "bob", "system:serviceaccount:ns1:a", "system:serviceaccount:ns2:b", "eve")),
			Groups:   pickSome(r, l("g1", "g2", "g3")),
		},
		Verb:      pick(r, l("get", "list", "create", "delete")),
		Namespace: pick(r, genNS),
	}
	if r.IntN(5) == 0 {
		a.Path = pick(r, l("/healthz", "/api/v1", "/api", "/metrics"))
		return a
	}
	a.ResourceRequest = true
	a.APIGroup = pick(r, l("", "apps", "batch"))
	a.Resource = pick(r, l("pods", "deployments", "secrets"))
	a.Subresource = pick(r, l("", "", "log", "status"))
	a.Name = pick(r, l("", "a", "b", "z"))
	return a
}

// scanAuthorize decides as kube-apiserver does, by reading every binding.
func (p policy) scanAuthorize(a auth.Attributes) (auth.Decision, string) {
	rs := newRoleSet(p.roles, p.clusterRoles)
	var errs []error
	try := func(b binding, ns string) string {
		s := firstApplying(&a.User, b.subjects, ns)
		if s == nil {
			return ""
		}
		rules, err := rs.resolve(b.roleRef, b.namespace, listerErrors)
		if err != nil {
			errs = append(errs, err)
		}
		if RulesAllow(a, rules...) {
			return "RBAC: allowed by " + b.describe(s)
		}
		return ""
	}
	for _, c := range p.clusterRoleBindings {
		if r := try(binding{kind: "ClusterRoleBinding", name: c.Name, roleRef: c.RoleRef, subjects: c.Subjects}, ""); r != "" {
			return auth.DecisionAllow, r
		}
	}
	for _, b := range p.roleBindings {
		if a.Namespace == "" || b.Namespace != a.Namespace {
			continue
		}
		rbnd := binding{kind: "RoleBinding", name: b.Name, namespace: b.Namespace, roleRef: b.RoleRef, subjects: b.Subjects}
		if r := try(rbnd, a.Namespace); r != "" {
			return auth.DecisionAllow, r
		}
	}
	if len(errs) > 0 {
		return auth.DecisionNoOpinion, "RBAC: " + utilerrors.NewAggregate(errs).Error()
	}
	return auth.DecisionNoOpinion, ""
}

// TestIndexAgreesWithScan: the indexed snapshot decides, and explains, as a
// scan of every binding does.
func TestIndexAgreesWithScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	allows := 0
	for i := range 300 {
		p := genPolicy(r, 1+r.IntN(20))
		s := NewSnapshot(p.roles, p.clusterRoles, p.roleBindings, p.clusterRoleBindings)
		for range 50 {
			a := genAttributes(r)
			d, reason, _ := s.Authorize(context.Background(), a)
			wantD, wantReason := p.scanAuthorize(a)
			if d != wantD || reason != wantReason {
				t.Fatalf("policy %d: Authorize(%+v) = %v, %q; scan says %v, %q", i, a, d, reason, wantD, wantReason)
			}
			if d == auth.DecisionAllow {
				allows++
			}
		}
	}
	if allows < 1000 || allows > 14000 {
		t.Errorf("%d of 15000 decisions allowed: the generator explores too little", allows)
	}
}

// FuzzIndexAgreesWithScan explores more policies than the test above: the
// fuzzer picks the generator's seeds.
func FuzzIndexAgreesWithScan(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Add(uint64(42), uint64(7))
	f.Fuzz(func(t *testing.T, seed1, seed2 uint64) {
		r := rand.New(rand.NewPCG(seed1, seed2))
		p := genPolicy(r, 1+r.IntN(30))
		s := NewSnapshot(p.roles, p.clusterRoles, p.roleBindings, p.clusterRoleBindings)
		for range 20 {
			a := genAttributes(r)
			d, reason, _ := s.Authorize(context.Background(), a)
			if wantD, wantReason := p.scanAuthorize(a); d != wantD || reason != wantReason {
				t.Fatalf("Authorize(%+v) = %v, %q; scan says %v, %q", a, d, reason, wantD, wantReason)
			}
		}
	})
}
