package server

import (
	"context"
	"fmt"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/auth/rbac"
	"github.com/admitd/admitd/internal/auth/rbac/bootstrap"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
)

// rbacResources are what the RBAC authorizer reads.
var rbacResources = []schema.GroupVersionResource{
	rbacv1.SchemeGroupVersion.WithResource("roles"),
	rbacv1.SchemeGroupVersion.WithResource("clusterroles"),
	rbacv1.SchemeGroupVersion.WithResource("rolebindings"),
	rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings"),
}

// rbacPolicy is the RBAC authorizer with the watch-fed cache that keeps its
// snapshot: a write through this server reloads it before the write
// returns (a write observer), a watch follows writes of other servers.
type rbacPolicy struct {
	authorizer *rbac.Authorizer
	cache      *admissionsource.ConfigCache[rbac.Snapshot]
}

func newRBACPolicy(store storage.Store, cat *registry.Catalogue) *rbacPolicy {
	p := &rbacPolicy{authorizer: rbac.New(nil)}
	p.cache = admissionsource.NewConfigCache(store, cat, rbacResources, func(objs []runtime.Object) *rbac.Snapshot {
		s := rbacSnapshot(objs)
		p.authorizer.Store(s)
		return s
	})
	return p
}

// rbacSnapshot indexes the stored RBAC objects.
func rbacSnapshot(objs []runtime.Object) *rbac.Snapshot {
	var (
		roles        []*rbacv1.Role
		clusterRoles []*rbacv1.ClusterRole
		bindings     []*rbacv1.RoleBinding
		clusterBinds []*rbacv1.ClusterRoleBinding
	)
	for _, obj := range objs {
		switch o := obj.(type) {
		case *rbacv1.Role:
			roles = append(roles, o)
		case *rbacv1.ClusterRole:
			clusterRoles = append(clusterRoles, o)
		case *rbacv1.RoleBinding:
			bindings = append(bindings, o)
		case *rbacv1.ClusterRoleBinding:
			clusterBinds = append(clusterBinds, o)
		}
	}
	return rbac.NewSnapshot(roles, clusterRoles, bindings, clusterBinds)
}

// ensureBootstrapPolicy creates the bootstrap roles and bindings that do
// not exist and reconciles those that do (reconcileBootstrap), as
// kube-apiserver's RBAC post-start hook; on a restart where neither the
// policy nor any of its objects changed since, it has nothing to do and
// does not decode them (EnsureObjectsRecorded). The aggregated ClusterRoles
// (admin, edit, view, ...) are created with their rules already gathered,
// so that they work from the first request; the aggregation controller
// keeps them up to date afterwards.
//
// Unlike upstream, the old ClusterRolesToAggregate and
// ClusterRoleBindingsToSplit migrations are not done (they concern clusters
// older than admitd), nor are bindings with a changed roleRef recreated.
func ensureBootstrapPolicy(ctx context.Context, api *apiserver.Server) error {
	record := apiserver.EnsureRecord{Key: "rbac-bootstrap-policy", Fingerprint: bootstrap.Fingerprint() + "/" + bootstrapReconcileVersion}
	err := api.EnsureObjectsRecorded(ctx, record, apiserver.KubeAPIServerManager, reconcileBootstrap, func() ([]runtime.Object, error) {
		policy, err := bootstrapObjects()
		if err != nil {
			return nil, err
		}
		objs := make([]runtime.Object, len(policy))
		for i, obj := range policy {
			objs[i] = obj.DeepCopyObject()
		}
		return objs, nil
	})
	if err != nil {
		return fmt.Errorf("bootstrap RBAC policy: %w", err)
	}
	return nil
}

// bootstrapReconcileVersion names the reconcile rules of
// reconcileBootstrap: change it with them, so that a restart on an
// unchanged policy and unchanged roles still applies new rules.
const bootstrapReconcileVersion = "reconcile-1"

// bootstrapObjects are the objects of the bootstrap policy, aggregated
// roles gathered, in creation order; decoded once per process (it takes
// milliseconds), copied before use.
var bootstrapObjects = sync.OnceValues(func() ([]runtime.Object, error) {
	p, err := bootstrap.Load()
	if err != nil {
		return nil, err
	}
	aggregateBootstrapRoles(p.ClusterRoles)
	return p.Objects(), nil
})

// aggregateBootstrapRoles fills in the rules of the aggregated roles, until
// nothing changes (admin aggregates edit, which aggregates view).
func aggregateBootstrapRoles(roles []rbacv1.ClusterRole) {
	all := make([]*rbacv1.ClusterRole, len(roles))
	for i := range roles {
		all[i] = &roles[i]
	}
	for changed := true; changed; {
		changed = false
		for _, r := range all {
			rules, ok, err := rbac.AggregatedRules(r, all)
			if ok && err == nil && len(rules) != len(r.Rules) {
				r.Rules, changed = rules, true
			}
		}
	}
}

// rbacWriteCheck is the apiserver's WriteCheck: writes of roles and
// bindings go through c (escalation prevention), others pass.
func rbacWriteCheck(c rbac.WriteCheck) func(ctx context.Context, a *admission.Attributes) error {
	return func(ctx context.Context, a *admission.Attributes) error {
		if a.Resource.Group != rbacv1.GroupName || a.Subresource != "" {
			return nil
		}
		switch obj := a.Object.(type) {
		case *rbacv1.Role:
			old, _ := a.OldObject.(*rbacv1.Role)
			return c.Role(ctx, a.UserInfo, obj, old)
		case *rbacv1.ClusterRole:
			old, _ := a.OldObject.(*rbacv1.ClusterRole)
			return c.ClusterRole(ctx, a.UserInfo, obj, old)
		case *rbacv1.RoleBinding:
			old, _ := a.OldObject.(*rbacv1.RoleBinding)
			return c.RoleBinding(ctx, a.UserInfo, obj, old)
		case *rbacv1.ClusterRoleBinding:
			old, _ := a.OldObject.(*rbacv1.ClusterRoleBinding)
			return c.ClusterRoleBinding(ctx, a.UserInfo, obj, old)
		}
		return nil
	}
}
