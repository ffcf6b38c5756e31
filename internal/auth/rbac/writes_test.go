package rbac

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func writePolicy() WriteCheck {
	clusterRoles := []*rbacv1.ClusterRole{
		{ObjectMeta: objectMeta("", "pods"), Rules: []rbacv1.PolicyRule{rule(l("get", "list"), l(""), l("pods"))}},
		{ObjectMeta: objectMeta("", "escalator"), Rules: []rbacv1.PolicyRule{rule(l("escalate"), l(rbacv1.GroupName), l("roles"))}},
		{ObjectMeta: objectMeta("", "binder"), Rules: []rbacv1.PolicyRule{
			{Verbs: l("bind"), APIGroups: l(rbacv1.GroupName), Resources: l("clusterroles"), ResourceNames: l("admin")}}},
		{ObjectMeta: objectMeta("", "admin"), Rules: []rbacv1.PolicyRule{rule(l("*"), l("*"), l("*"))}},
		{ObjectMeta: objectMeta("", "all"), Rules: []rbacv1.PolicyRule{rule(l("*"), l("*"), l("*")), {Verbs: l("*"), NonResourceURLs: l("*")}}},
	}
	rbs := []*rbacv1.RoleBinding{
		rb("ns1", "pods", "ClusterRole", "pods", user("alice")),
		rb("ns1", "esc", "ClusterRole", "escalator", user("esc")),
		rb("ns1", "bind", "ClusterRole", "binder", user("binder")),
	}
	crbs := []*rbacv1.ClusterRoleBinding{crb("root", "all", user("root"))}
	s := NewSnapshot(nil, clusterRoles, rbs, crbs)
	return WriteCheck{Authorizer: s, Policy: New(s)}
}

func TestWriteCheckRoles(t *testing.T) {
	c := writePolicy()
	ctx := context.Background()
	role := func(verbs ...string) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: objectMeta("ns1", "r"), Rules: []rbacv1.PolicyRule{rule(verbs, l(""), l("pods"))}}
	}
	if err := c.Role(ctx, as("alice"), role("get"), nil); err != nil {
		t.Errorf("Role(alice, get pods) = %v, want nil: she holds it", err)
	}
	err := c.Role(ctx, as("alice"), role("get", "delete"), nil)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `roles.rbac.authorization.k8s.io "r" is forbidden: user "alice"`) ||
		!strings.HasSuffix(err.Error(), `{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`) {
		t.Errorf("Role(alice, get+delete pods) = %v, want 403 naming delete", err)
	}
	if err := c.Role(ctx, as("alice"), role("get", "delete"), role("get")); err == nil {
		t.Error("Role(alice, adding delete) = nil, want 403")
	}
	if err := c.Role(ctx, as("alice"), role("get", "delete"), role("get", "delete")); err != nil {
		t.Errorf("Role(alice, no change) = %v, want nil: a write that changes nothing grants nothing", err)
	}
	gcOnly := role("get", "delete")
	gcOnly.Finalizers = l("x")
	if err := c.Role(ctx, as("alice"), gcOnly, role("get", "delete")); err != nil {
		t.Errorf("Role(alice, finalizers only) = %v, want nil", err)
	}
	if err := c.Role(ctx, as("esc"), role("*"), nil); err != nil {
		t.Errorf("Role(esc, *) = %v, want nil: esc may escalate roles in ns1", err)
	}
	if err := c.Role(ctx, as("x", "system:masters"), role("*"), nil); err != nil {
		t.Errorf("Role(system:masters, *) = %v, want nil", err)
	}
}

func TestWriteCheckClusterRoles(t *testing.T) {
	c := writePolicy()
	ctx := context.Background()
	agg := &rbacv1.ClusterRole{ObjectMeta: objectMeta("", "agg"),
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a": "b"}}}}}
	err := c.ClusterRole(ctx, as("alice"), agg, nil)
	if !apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), "must have cluster-admin privileges to use the aggregationRule") {
		t.Errorf("ClusterRole(alice, aggregated) = %v, want 403 about the aggregationRule", err)
	}
	if err := c.ClusterRole(ctx, as("root"), agg, nil); err != nil {
		t.Errorf("ClusterRole(root, aggregated) = %v, want nil", err)
	}
	plain := &rbacv1.ClusterRole{ObjectMeta: objectMeta("", "agg")}
	if err := c.ClusterRole(ctx, as("alice"), plain, agg); err == nil {
		t.Error("ClusterRole(alice, removing the aggregationRule) = nil, want 403")
	}
}

func TestWriteCheckBindings(t *testing.T) {
	c := writePolicy()
	ctx := context.Background()
	if err := c.RoleBinding(ctx, as("alice"), rb("ns1", "b", "ClusterRole", "pods", user("bob")), nil); err != nil {
		t.Errorf("RoleBinding(alice, pods) = %v, want nil: she holds pods", err)
	}
	if err := c.RoleBinding(ctx, as("alice"), rb("ns1", "b", "ClusterRole", "admin", user("bob")), nil); !apierrors.IsForbidden(err) {
		t.Errorf("RoleBinding(alice, admin) = %v, want 403", err)
	}
	if err := c.RoleBinding(ctx, as("binder"), rb("ns1", "b", "ClusterRole", "admin", user("bob")), nil); err != nil {
		t.Errorf("RoleBinding(binder, admin) = %v, want nil: binder may bind admin", err)
	}
	if err := c.RoleBinding(ctx, as("binder"), rb("ns2", "b", "ClusterRole", "admin", user("bob")), nil); err == nil {
		t.Error("RoleBinding(binder, admin in ns2) = nil, want 403: the bind grant is in ns1 only")
	}
	err := c.RoleBinding(ctx, as("alice"), rb("ns1", "b", "Role", "missing", user("bob")), nil)
	if !apierrors.IsNotFound(err) || err.Error() != `roles.rbac.authorization.k8s.io "missing" not found` {
		t.Errorf("RoleBinding(alice, missing Role) = %v, want the storage's NotFound", err)
	}
	if err := c.ClusterRoleBinding(ctx, as("root"), crb("b", "admin", user("bob")), nil); err != nil {
		t.Errorf("ClusterRoleBinding(root, admin) = %v, want nil", err)
	}
	if err := c.ClusterRoleBinding(ctx, as("alice"), crb("b", "pods", user("bob")), nil); !apierrors.IsForbidden(err) {
		t.Errorf("ClusterRoleBinding(alice, pods) = %v, want 403: she holds pods in ns1 only", err)
	}
}
