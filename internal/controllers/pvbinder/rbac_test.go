package pvbinder

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/admitd/admitd/internal/auth/rbac"
	"github.com/admitd/admitd/internal/auth/rbac/bootstrap"
)

// The bootstrap policy lets User (system:controller:persistent-volume-binder,
// bound to the persistent-volume-binder service account) make every
// request the controller makes.
func TestBootstrapRBACCoversTheController(t *testing.T) {
	policy, err := bootstrap.Load()
	if err != nil {
		t.Fatal(err)
	}
	var roles []*rbacv1.ClusterRole
	for i := range policy.ClusterRoles {
		roles = append(roles, &policy.ClusterRoles[i])
	}
	var bindings []*rbacv1.ClusterRoleBinding
	for i := range policy.ClusterRoleBindings {
		bindings = append(bindings, &policy.ClusterRoleBindings[i])
	}
	rules, err := rbac.NewSnapshot(nil, roles, nil, bindings).RulesFor(User, "")
	if err != nil {
		t.Fatal(err)
	}
	needed := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get", "list", "watch", "update", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumes/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch", "update"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
	if ok, missing := rbac.Covers(rules, needed); !ok {
		t.Fatalf("the bootstrap policy does not let %s %v", User.Username, missing)
	}
}
