package registry

// Expected values follow upstream pkg/apis/rbac/v1/defaults.go.

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestDefaultRBACBindings(t *testing.T) {
	const rbac = rbacv1.GroupName
	subjects := func(group string) []rbacv1.Subject {
		return []rbacv1.Subject{{Kind: "User", Name: "u", APIGroup: group}, {Kind: "Group", Name: "g", APIGroup: group},
			{Kind: "ServiceAccount", Name: "sa", Namespace: "ns"}}
	}
	for _, tc := range []struct {
		name    string
		in, out runtime.Object
	}{{
		name: "RoleBinding.rbac.authorization.k8s.io",
		in:   &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "r"}, Subjects: subjects("")},
		out:  &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbac, Kind: "Role", Name: "r"}, Subjects: subjects(rbac)},
	}, {
		name: "ClusterRoleBinding.rbac.authorization.k8s.io",
		in:   &rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "r"}, Subjects: subjects("")},
		out:  &rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbac, Kind: "ClusterRole", Name: "r"}, Subjects: subjects(rbac)},
	}, {
		name: "RoleBinding.rbac.authorization.k8s.io/kept",
		in:   &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: "example.com", Kind: "Role", Name: "r"}, Subjects: subjects("example.com")},
		out:  &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: "example.com", Kind: "Role", Name: "r"}, Subjects: subjects("example.com")},
	}} {
		kind, _, _ := strings.Cut(tc.name, "/")
		t.Run(tc.name, func(t *testing.T) { checkDefault(t, kind, tc.in, tc.out) })
	}
}
