package rbac

import (
	"fmt"
	"math/rand/v2"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/auth"
)

// The vocabulary is small so that generated rules and requests meet often,
// and holds the awkward values: stars as values, "*/sub", nested
// subresources, URL prefixes, empty strings, service-account names with
// colons.
var (
	vNamespaces = []string{"ns1", "ns2", "a:b"}
	vRoleNames  = []string{"r1", "r2", "r3"}
	vVerbs      = []string{"get", "list", "create", "*", ""}
	vGroups     = []string{"", "apps", "*"}
	vResources  = []string{"pods", "pods/log", "pods/status", "*/status", "*/*", "deployments", "*", "a/b/c", "*/b/c", "*/"}
	vNames      = []string{"a", "b", ""}
	vURLs       = []string{"/healthz", "/api/*", "/api", "/logs**", "*", "/"}
	vUsers      = []string{"alice", "bob", "system:serviceaccount:ns1:sa", "system:serviceaccount:a:b:c", "system:serviceaccount:ns2:sa", ""}
	vGroupNames = []string{"g1", "g2", "system:authenticated"}
)

type gen struct{ r *rand.Rand }

func newGen(seed uint64) gen { return gen{rand.New(rand.NewPCG(seed, 7))} }

func (g gen) pick(from []string) string { return from[g.r.IntN(len(from))] }

// some returns 0-3 values (1-3 when atLeastOne).
func (g gen) some(from []string, atLeastOne bool) []string {
	n := g.r.IntN(4)
	if atLeastOne && n == 0 {
		n = 1
	}
	var out []string
	for range n {
		out = append(out, g.pick(from))
	}
	return out
}

func (g gen) rule() rbacv1.PolicyRule {
	r := rbacv1.PolicyRule{Verbs: g.some(vVerbs, true)}
	switch g.r.IntN(5) {
	case 0:
		r.NonResourceURLs = g.some(vURLs, true)
	case 1: // a mixed rule, invalid in a stored object but fine to decide on
		r.NonResourceURLs = g.some(vURLs, false)
		fallthrough
	default:
		r.APIGroups, r.Resources = g.some(vGroups, g.r.IntN(8) > 0), g.some(vResources, true)
		if g.r.IntN(3) == 0 {
			r.ResourceNames = g.some(vNames, true)
		}
	}
	return r
}

func (g gen) rules() []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for range 1 + g.r.IntN(3) {
		out = append(out, g.rule())
	}
	return out
}

func (g gen) subjects() []rbacv1.Subject {
	var out []rbacv1.Subject
	for range 1 + g.r.IntN(3) {
		switch g.r.IntN(5) {
		case 0, 1:
			out = append(out, rbacv1.Subject{Kind: rbacv1.UserKind, Name: g.pick(vUsers)})
		case 2:
			out = append(out, rbacv1.Subject{Kind: rbacv1.GroupKind, Name: g.pick(vGroupNames)})
		case 3:
			ns := g.pick(append([]string{""}, vNamespaces...))
			out = append(out, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: g.pick([]string{"sa", "b:c", "c"})})
		default:
			out = append(out, rbacv1.Subject{Kind: g.pick([]string{"user", "Other"}), Name: g.pick(vUsers)})
		}
	}
	return out
}

func (g gen) roleRef(cluster bool) rbacv1.RoleRef {
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: g.pick([]string{"Role", "Role", "ClusterRole", "ClusterRole"}),
		Name: g.pick(vRoleNames)}
	if cluster && g.r.IntN(10) > 0 {
		ref.Kind = "ClusterRole" // a ClusterRoleBinding's Role is never found
	}
	switch g.r.IntN(12) {
	case 0:
		ref.Kind = "Bogus"
	case 1:
		ref.Name = "missing"
	}
	return ref
}

// policy makes n bindings over roles that mostly exist; names are unique,
// as in a cluster.
func (g gen) policy(n int) policy {
	var p policy
	for _, name := range vRoleNames {
		if g.r.IntN(8) > 0 {
			p.clusterRoles = append(p.clusterRoles, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: g.rules()})
		}
		for _, ns := range vNamespaces {
			if g.r.IntN(6) > 0 {
				p.roles = append(p.roles, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: g.rules()})
			}
		}
	}
	for i := range n {
		name := fmt.Sprint("b", i)
		if g.r.IntN(2) == 0 {
			p.clusterRoleBindings = append(p.clusterRoleBindings, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: g.subjects(), RoleRef: g.roleRef(true)})
			continue
		}
		p.roleBindings = append(p.roleBindings, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: g.pick(vNamespaces), Name: name}, Subjects: g.subjects(), RoleRef: g.roleRef(false)})
	}
	return p
}

func (g gen) user() authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: g.pick(vUsers), Groups: g.some(vGroupNames, false)}
}

func (g gen) attributes() auth.Attributes {
	a := auth.Attributes{User: g.user(), Verb: g.pick([]string{"get", "list", "create", "delete", "*"}),
		Namespace: g.pick(append([]string{""}, vNamespaces...))}
	if g.r.IntN(5) == 0 {
		a.Path = g.pick([]string{"/healthz", "/healthz/x", "/api", "/api/v1", "/apis", "/logs", "/logsx", "/", ""})
		return a
	}
	a.ResourceRequest = true
	a.APIGroup = g.pick([]string{"", "apps", "batch", "*"})
	a.Resource = g.pick([]string{"pods", "deployments", "secrets", "a", "*"})
	a.Subresource = g.pick([]string{"", "", "log", "status", "b/c", "*"})
	a.Name = g.pick(vNames)
	return a
}
