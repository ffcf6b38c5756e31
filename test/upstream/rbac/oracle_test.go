package rbac

import (
	"errors"

	"context"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/registry/rbac/validation"
	upstream "k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/rbac"
)

// policy is one set of RBAC objects, given to both sides.
type policy struct {
	roles               []*rbacv1.Role
	clusterRoles        []*rbacv1.ClusterRole
	roleBindings        []*rbacv1.RoleBinding
	clusterRoleBindings []*rbacv1.ClusterRoleBinding
}

func (p policy) ours() *rbac.Snapshot {
	return rbac.NewSnapshot(p.roles, p.clusterRoles, p.roleBindings, p.clusterRoleBindings)
}

// static is upstream's authorizer over its static lists, which keep the
// input order (so the binding an allow cites is the same on both sides).
func (p policy) static() *upstream.RBACAuthorizer {
	_, s := validation.NewTestRuleResolver(p.roles, p.roleBindings, p.clusterRoles, p.clusterRoleBindings)
	return upstream.New(s, s, s, s)
}

// listers are upstream's informer listers over p, as kube-apiserver wires
// its authorizer; their errors are the ones users see.
type listers struct {
	roles               *upstream.RoleGetter
	roleBindings        *upstream.RoleBindingLister
	clusterRoles        *upstream.ClusterRoleGetter
	clusterRoleBindings *upstream.ClusterRoleBindingLister
}

func (p policy) listers(t testing.TB) listers {
	index := func(objs ...any) cache.Indexer {
		i := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		for _, o := range objs {
			if err := i.Add(o); err != nil {
				t.Fatal(err)
			}
		}
		return i
	}
	return listers{
		roles:               &upstream.RoleGetter{Lister: rbaclisters.NewRoleLister(index(anys(p.roles)...))},
		roleBindings:        &upstream.RoleBindingLister{Lister: rbaclisters.NewRoleBindingLister(index(anys(p.roleBindings)...))},
		clusterRoles:        &upstream.ClusterRoleGetter{Lister: rbaclisters.NewClusterRoleLister(index(anys(p.clusterRoles)...))},
		clusterRoleBindings: &upstream.ClusterRoleBindingLister{Lister: rbaclisters.NewClusterRoleBindingLister(index(anys(p.clusterRoleBindings)...))},
	}
}

func (l listers) authorizer() *upstream.RBACAuthorizer {
	return upstream.New(l.roles, l.roleBindings, l.clusterRoles, l.clusterRoleBindings)
}

func (l listers) resolver() *validation.DefaultRuleResolver {
	return validation.NewDefaultRuleResolver(l.roles, l.roleBindings, l.clusterRoles, l.clusterRoleBindings)
}

func anys[T any](in []T) []any {
	out := make([]any, len(in))
	for i, v := range in {
		out[i] = v
	}
	return out
}

func upstreamUser(u authenticationv1.UserInfo) *user.DefaultInfo {
	extra := map[string][]string{}
	for k, v := range u.Extra {
		extra[k] = v
	}
	return &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra}
}

func upstreamAttributes(a auth.Attributes) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User: upstreamUser(a.User), Verb: a.Verb, Namespace: a.Namespace, APIGroup: a.APIGroup,
		APIVersion: a.APIVersion, Resource: a.Resource, Subresource: a.Subresource, Name: a.Name,
		ResourceRequest: a.ResourceRequest, Path: a.Path,
	}
}

// checkSame decides a on both sides: the decisions must be equal, and so
// must the reasons of an allow.
func checkSame(t *testing.T, what string, ours *rbac.Snapshot, theirs *upstream.RBACAuthorizer, a auth.Attributes) auth.Decision {
	t.Helper()
	d, reason, err := ours.Authorize(context.Background(), a)
	ud, ureason, uerr := theirs.Authorize(context.Background(), upstreamAttributes(a))
	if int(d) != int(ud) || (err == nil) != (uerr == nil) || (d == auth.DecisionAllow && reason != ureason) {
		t.Fatalf("%s: Authorize(%+v) = %v, %q, %v; upstream says %v, %q, %v", what, a, d, reason, err, ud, ureason, uerr)
	}
	return d
}

// sameErrors compares two lists of errors ("RBAC: [a, b]", "[[a, b]]") as
// sets: a lister lists in no particular order.
func sameErrors(a, b string) bool {
	split := func(s string) []string {
		s = strings.TrimRight(strings.TrimLeft(strings.TrimPrefix(s, "RBAC: "), "["), "]")
		parts := strings.Split(s, ", ")
		slices.Sort(parts)
		return slices.Compact(parts)
	}
	return slices.Equal(split(a), split(b))
}

func errorsAs(err error, target *apierrors.APIStatus) bool { return errors.As(err, target) }
