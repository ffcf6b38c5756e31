package rbac

import (
	"strconv"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// visitor receives each rule that applies, with the binding and subject that
// grant it, or a binding's resolution error (rule nil). It returns false to
// stop the walk.
type visitor func(b *binding, subject *rbacv1.Subject, rule *rbacv1.PolicyRule, err error) bool

// visit walks the rules that apply to user in namespace in kube-apiserver's
// order: ClusterRoleBindings first, then, when namespace is not empty, the
// RoleBindings of namespace; each in input order, each binding's rules in
// order. Only bindings that name the user are looked at.
func (s *Snapshot) visit(user *authenticationv1.UserInfo, namespace string, fn visitor) {
	if s == nil {
		return
	}
	if !s.cluster.visit(user, "", fn) {
		return
	}
	if namespace == "" {
		return
	}
	if idx := s.namespaces[namespace]; idx != nil {
		idx.visit(user, namespace, fn)
	}
}

// visit walks x's bindings that name user; false means fn stopped the walk.
func (x *bindingIndex) visit(user *authenticationv1.UserInfo, namespace string, fn visitor) bool {
	for _, pos := range x.candidates(user.Username, user.Groups) {
		b := &x.bindings[pos]
		subject := firstApplying(user, b.subjects, namespace)
		if subject == nil {
			continue // defensive: the index and appliesTo disagree
		}
		if b.err != nil {
			if !fn(b, subject, nil, b.err) {
				return false
			}
			continue
		}
		for i := range b.rules {
			if !fn(b, subject, &b.rules[i], nil) {
				return false
			}
		}
	}
	return true
}

// firstApplying returns the first of subjects that names user; the reason of
// an allow cites it.
func firstApplying(user *authenticationv1.UserInfo, subjects []rbacv1.Subject, namespace string) *rbacv1.Subject {
	for i := range subjects {
		if appliesTo(user, &subjects[i], namespace) {
			return &subjects[i]
		}
	}
	return nil
}

func appliesTo(user *authenticationv1.UserInfo, s *rbacv1.Subject, namespace string) bool {
	switch s.Kind {
	case rbacv1.UserKind:
		return user.Username == s.Name
	case rbacv1.GroupKind:
		for _, g := range user.Groups {
			if g == s.Name {
				return true
			}
		}
		return false
	case rbacv1.ServiceAccountKind:
		ns := s.Namespace
		if ns == "" {
			ns = namespace
		}
		return ns != "" && isServiceAccount(user.Username, ns, s.Name)
	default:
		return false
	}
}

// isServiceAccount reports whether username is serviceAccountUsername(ns,
// name), without building it.
func isServiceAccount(username, ns, name string) bool {
	rest, ok := strings.CutPrefix(username, serviceAccountPrefix)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, ns)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, ":")
	return ok && rest == name
}

// describe names the grant in kube-apiserver's words, for example
// `ClusterRoleBinding "x" of ClusterRole "y" to User "alice"` or
// `RoleBinding "b/ns" of Role "r" to ServiceAccount "sa/ns"`. (strconv.Quote
// is fmt's %q, without fmt's cost on every allowed request.)
func (b *binding) describe(s *rbacv1.Subject) string {
	name := b.name
	if b.kind == "RoleBinding" {
		name += "/" + b.namespace
	}
	return b.kind + " " + strconv.Quote(name) + " of " + b.roleRef.Kind + " " + strconv.Quote(b.roleRef.Name) +
		" to " + describeSubject(s, b.namespace)
}

func describeSubject(s *rbacv1.Subject, bindingNamespace string) string {
	if s.Kind != rbacv1.ServiceAccountKind {
		return s.Kind + " " + strconv.Quote(s.Name)
	}
	ns := s.Namespace
	if ns == "" {
		ns = bindingNamespace
	}
	return s.Kind + " " + strconv.Quote(s.Name+"/"+ns)
}
