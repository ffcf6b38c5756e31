package controllertest

import (
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/admitd/admitd/internal/auth/rbac"
	"github.com/admitd/admitd/internal/auth/rbac/bootstrap"
)

// RequireBootstrapRBAC fails the test unless kube-apiserver's bootstrap
// policy lets user make every request needed describes (a controller's,
// as its service account).
func RequireBootstrapRBAC(t testing.TB, user authenticationv1.UserInfo, needed []rbacv1.PolicyRule) {
	t.Helper()
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
	rules, err := rbac.NewSnapshot(nil, roles, nil, bindings).RulesFor(user, "")
	if err != nil {
		t.Fatal(err)
	}
	if ok, missing := rbac.Covers(rules, needed); !ok {
		t.Fatalf("the bootstrap policy does not let %s %v", user.Username, missing)
	}
}
