package rbac

import (
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Snapshot is an immutable, indexed view of the RBAC objects of a cluster.
// It is safe for concurrent use. Build one with NewSnapshot.
type Snapshot struct {
	roles roleSet
	// cluster holds the ClusterRoleBindings.
	cluster *bindingIndex
	// namespaces holds the RoleBindings of each namespace.
	namespaces map[string]*bindingIndex
}

// binding is a RoleBinding or ClusterRoleBinding with its role reference
// resolved when the snapshot was built.
type binding struct {
	kind      string // "RoleBinding" or "ClusterRoleBinding"
	name      string
	namespace string // "" for a ClusterRoleBinding
	roleRef   rbacv1.RoleRef
	subjects  []rbacv1.Subject
	rules     []rbacv1.PolicyRule
	err       error // why roleRef could not be resolved
}

// bindingIndex holds the bindings of one scope in their input order and
// finds them by subject. Each posting list is ascending.
type bindingIndex struct {
	bindings []binding
	users    map[string][]int32
	groups   map[string][]int32
	// serviceAccounts is keyed by the service account's user name,
	// system:serviceaccount:<namespace>:<name>.
	serviceAccounts map[string][]int32
}

// NewSnapshot indexes the given objects. Role references are resolved here,
// once: a binding whose role does not exist keeps the error that a decision
// reports, as kube-apiserver reports a lister's NotFound. Nil elements are
// skipped, and of two roles with one name the first counts. The objects are
// not copied and must not be modified afterwards.
func NewSnapshot(roles []*rbacv1.Role, clusterRoles []*rbacv1.ClusterRole,
	roleBindings []*rbacv1.RoleBinding, clusterRoleBindings []*rbacv1.ClusterRoleBinding) *Snapshot {
	rs := newRoleSet(roles, clusterRoles)
	s := &Snapshot{roles: rs, cluster: newBindingIndex(), namespaces: map[string]*bindingIndex{}}
	for _, crb := range clusterRoleBindings {
		if crb == nil {
			continue
		}
		rules, err := rs.resolve(crb.RoleRef, "", listerErrors)
		s.cluster.add(binding{kind: "ClusterRoleBinding", name: crb.Name, roleRef: crb.RoleRef,
			subjects: crb.Subjects, rules: rules, err: err})
	}
	for _, rb := range roleBindings {
		if rb == nil {
			continue
		}
		idx := s.namespaces[rb.Namespace]
		if idx == nil {
			idx = newBindingIndex()
			s.namespaces[rb.Namespace] = idx
		}
		rules, err := rs.resolve(rb.RoleRef, rb.Namespace, listerErrors)
		idx.add(binding{kind: "RoleBinding", name: rb.Name, namespace: rb.Namespace, roleRef: rb.RoleRef,
			subjects: rb.Subjects, rules: rules, err: err})
	}
	return s
}

type roleKey struct{ namespace, name string }

type roleSet struct {
	roles        map[roleKey]*rbacv1.Role
	clusterRoles map[string]*rbacv1.ClusterRole
}

func newRoleSet(roles []*rbacv1.Role, clusterRoles []*rbacv1.ClusterRole) roleSet {
	rs := roleSet{roles: map[roleKey]*rbacv1.Role{}, clusterRoles: map[string]*rbacv1.ClusterRole{}}
	for _, r := range roles {
		if r == nil {
			continue
		}
		if k := (roleKey{r.Namespace, r.Name}); rs.roles[k] == nil {
			rs.roles[k] = r
		}
	}
	for _, cr := range clusterRoles {
		if cr != nil && rs.clusterRoles[cr.Name] == nil {
			rs.clusterRoles[cr.Name] = cr
		}
	}
	return rs
}

// errStyle names the resources of NotFound errors as kube-apiserver does:
// its authorizer reads informer listers (`role.rbac.authorization.k8s.io "x"
// not found`), its checks of RBAC writes read storage (`roles.…`).
type errStyle struct{ role, clusterRole string }

var (
	listerErrors  = errStyle{role: "role", clusterRole: "clusterrole"}
	storageErrors = errStyle{role: "roles", clusterRole: "clusterroles"}
)

// resolve returns the rules roleRef names for a binding in namespace ("" for
// a ClusterRoleBinding).
func (rs roleSet) resolve(ref rbacv1.RoleRef, namespace string, style errStyle) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		// A ClusterRoleBinding cannot name a Role: a lookup without a
		// namespace finds none (and storage refuses to look).
		if namespace == "" && style == storageErrors {
			return nil, apierrors.NewBadRequest("Namespace parameter required.")
		}
		if r := rs.roles[roleKey{namespace, ref.Name}]; r != nil && namespace != "" {
			return r.Rules, nil
		}
		return nil, apierrors.NewNotFound(rbacv1.Resource(style.role), ref.Name)
	case "ClusterRole":
		if cr := rs.clusterRoles[ref.Name]; cr != nil {
			return cr.Rules, nil
		}
		return nil, apierrors.NewNotFound(rbacv1.Resource(style.clusterRole), ref.Name)
	default:
		return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
	}
}

func newBindingIndex() *bindingIndex {
	return &bindingIndex{users: map[string][]int32{}, groups: map[string][]int32{},
		serviceAccounts: map[string][]int32{}}
}

// add appends b and indexes it under each of its subjects. A
// ServiceAccount subject without a namespace means the binding's namespace;
// in a ClusterRoleBinding it names no one.
func (x *bindingIndex) add(b binding) {
	pos := int32(len(x.bindings))
	x.bindings = append(x.bindings, b)
	for _, s := range b.subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			x.users[s.Name] = appendOnce(x.users[s.Name], pos)
		case rbacv1.GroupKind:
			x.groups[s.Name] = appendOnce(x.groups[s.Name], pos)
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = b.namespace
			}
			if ns == "" {
				continue
			}
			key := serviceAccountUsername(ns, s.Name)
			x.serviceAccounts[key] = appendOnce(x.serviceAccounts[key], pos)
		}
	}
}

// appendOnce appends pos unless it is already last: a binding naming one
// subject twice is listed once.
func appendOnce(list []int32, pos int32) []int32 {
	if n := len(list); n > 0 && list[n-1] == pos {
		return list
	}
	return append(list, pos)
}

const serviceAccountPrefix = "system:serviceaccount:"

func serviceAccountUsername(namespace, name string) string {
	return serviceAccountPrefix + namespace + ":" + name
}

// candidates returns, ascending and without duplicates, the positions of the
// bindings that name user, one of groups, or user as a service account. When
// only one posting list matches it is returned as is: callers must not
// modify the result.
func (x *bindingIndex) candidates(user string, groups []string) []int32 {
	lists := make([][]int32, 0, 8)
	add := func(l []int32) {
		if len(l) > 0 {
			lists = append(lists, l)
		}
	}
	add(x.users[user])
	add(x.serviceAccounts[user])
	for _, g := range groups {
		add(x.groups[g])
	}
	switch len(lists) {
	case 0:
		return nil
	case 1:
		return lists[0]
	}
	var out []int32
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
