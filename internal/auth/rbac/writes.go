package rbac

import (
	"context"
	"errors"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/auth"
)

// WriteCheck keeps users from gaining permissions by writing RBAC objects,
// as kube-apiserver's RBAC storage does. A writer passes when it is in
// system:masters; or, for roles, when it may "escalate" them; or, for
// bindings, when it may "bind" the role they name; or when it already holds
// every permission the written object grants. An update that only changes
// ownerReferences or finalizers always passes.
//
// Each method takes the object written, with the namespace of the request,
// and old, the stored object (nil on create). The error is the one
// kube-apiserver answers: 403 Forbidden naming the missing permissions, or
// the NotFound of a binding's missing role.
type WriteCheck struct {
	// Authorizer is the server's authorizer chain, asked about the escalate
	// and bind verbs. Nil: no one may escalate or bind.
	Authorizer auth.Authorizer
	// Policy holds the RBAC rules the writer must hold.
	Policy *Authorizer
}

// fullAuthority is what setting an aggregationRule takes: it can gather any
// rule.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

const systemMasters = "system:masters"

// Role checks a write of role.
func (c WriteCheck) Role(ctx context.Context, user authenticationv1.UserInfo, role, old *rbacv1.Role) error {
	if c.mayEscalate(ctx, user, "roles", role.Namespace, role.Name, old != nil) || onlyGCFieldsChange(role, old) {
		return nil
	}
	return c.confirm(user, role.Namespace, role.Rules, "roles", role.Name)
}

// ClusterRole checks a write of role; setting, changing or removing an
// aggregationRule takes all permissions ("*" on everything).
func (c WriteCheck) ClusterRole(ctx context.Context, user authenticationv1.UserInfo, role, old *rbacv1.ClusterRole) error {
	if c.mayEscalate(ctx, user, "clusterroles", "", role.Name, old != nil) || onlyGCFieldsChange(role, old) {
		return nil
	}
	if err := c.confirm(user, "", role.Rules, "clusterroles", role.Name); err != nil {
		return err
	}
	if !aggregates(role) && (old == nil || !aggregates(old)) {
		return nil
	}
	if ConfirmNoEscalation(c.storage(), user, "", fullAuthority) != nil {
		return apierrors.NewForbidden(rbacResource("clusterroles"), role.Name,
			errors.New("must have cluster-admin privileges to use the aggregationRule"))
	}
	return nil
}

// RoleBinding checks a write of binding.
func (c WriteCheck) RoleBinding(ctx context.Context, user authenticationv1.UserInfo, binding, old *rbacv1.RoleBinding) error {
	if isMaster(user) || onlyGCFieldsChange(binding, old) || c.mayBind(ctx, user, binding.RoleRef, binding.Namespace) {
		return nil
	}
	return c.confirmBinding(user, binding.RoleRef, binding.Namespace, "rolebindings", binding.Name)
}

// ClusterRoleBinding checks a write of binding.
func (c WriteCheck) ClusterRoleBinding(ctx context.Context, user authenticationv1.UserInfo, binding, old *rbacv1.ClusterRoleBinding) error {
	if isMaster(user) || onlyGCFieldsChange(binding, old) || c.mayBind(ctx, user, binding.RoleRef, "") {
		return nil
	}
	return c.confirmBinding(user, binding.RoleRef, "", "clusterrolebindings", binding.Name)
}

// mayEscalate: system:masters, or the escalate verb on the role resource.
// As kube-apiserver asks with the request's name, a create (a POST to the
// collection) asks about the escalate verb without a name.
func (c WriteCheck) mayEscalate(ctx context.Context, user authenticationv1.UserInfo, resource, namespace, name string, update bool) bool {
	if isMaster(user) {
		return true
	}
	if !update {
		name = ""
	}
	return c.allowed(ctx, auth.Attributes{User: user, Verb: "escalate", ResourceRequest: true, APIGroup: rbacv1.GroupName,
		APIVersion: "*", Resource: resource, Namespace: namespace, Name: name})
}

// mayBind: the bind verb on the role ref names, in the binding's namespace
// ("" for a ClusterRoleBinding).
func (c WriteCheck) mayBind(ctx context.Context, user authenticationv1.UserInfo, ref rbacv1.RoleRef, namespace string) bool {
	var resource string
	switch ref.Kind {
	case "Role":
		resource = "roles"
	case "ClusterRole":
		resource = "clusterroles"
	default:
		return false
	}
	return c.allowed(ctx, auth.Attributes{User: user, Verb: "bind", ResourceRequest: true, APIGroup: ref.APIGroup,
		APIVersion: "*", Resource: resource, Namespace: namespace, Name: ref.Name})
}

func (c WriteCheck) allowed(ctx context.Context, a auth.Attributes) bool {
	if c.Authorizer == nil {
		return false
	}
	d, _, _ := c.Authorizer.Authorize(ctx, a)
	return d == auth.DecisionAllow
}

func (c WriteCheck) confirm(user authenticationv1.UserInfo, namespace string, rules []rbacv1.PolicyRule, resource, name string) error {
	if err := ConfirmNoEscalation(c.storage(), user, namespace, rules); err != nil {
		return apierrors.NewForbidden(rbacResource(resource), name, err)
	}
	return nil
}

func (c WriteCheck) confirmBinding(user authenticationv1.UserInfo, ref rbacv1.RoleRef, namespace, resource, name string) error {
	rules, err := c.snapshot().roles.resolve(ref, namespace, storageErrors)
	if err != nil {
		return err
	}
	return c.confirm(user, namespace, rules, resource, name)
}

func (c WriteCheck) snapshot() *Snapshot {
	var s *Snapshot
	if c.Policy != nil {
		s = c.Policy.Snapshot()
	}
	if s == nil {
		s = NewSnapshot(nil, nil, nil, nil)
	}
	return s
}

// storage resolves rules as the RBAC storage does, whose errors name the
// resources in the plural.
func (c WriteCheck) storage() RuleResolver { return storageResolver{c.snapshot()} }

type storageResolver struct{ s *Snapshot }

func (r storageResolver) RulesFor(user authenticationv1.UserInfo, namespace string) ([]rbacv1.PolicyRule, error) {
	return r.s.rulesFor(user, namespace, storageErrors)
}

func isMaster(user authenticationv1.UserInfo) bool {
	for _, g := range user.Groups {
		if g == systemMasters {
			return true
		}
	}
	return false
}

func aggregates(r *rbacv1.ClusterRole) bool {
	return r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0
}

func rbacResource(resource string) schema.GroupResource {
	return schema.GroupResource{Group: rbacv1.GroupName, Resource: resource}
}

// onlyGCFieldsChange reports whether obj differs from old (nil on create)
// in nothing but the fields the garbage collector and finalizers need:
// ownerReferences, finalizers, selfLink and managedFields.
func onlyGCFieldsChange[T interface {
	runtime.Object
	comparable
}](obj, old T) bool {
	var zero T
	if old == zero {
		return false
	}
	copied := obj.DeepCopyObject()
	c, err := meta.Accessor(copied)
	if err != nil {
		return false
	}
	o, err := meta.Accessor(old)
	if err != nil {
		return false
	}
	c.SetOwnerReferences(o.GetOwnerReferences())
	c.SetFinalizers(o.GetFinalizers())
	c.SetSelfLink(o.GetSelfLink())
	c.SetManagedFields(o.GetManagedFields())
	return equality.Semantic.DeepEqual(copied, runtime.Object(old))
}
