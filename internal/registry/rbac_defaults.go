package registry

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Decoding defaults of the RBAC bindings (upstream
// pkg/apis/rbac/v1/defaults.go): a roleRef without a group names an RBAC
// role, and a subject without a group takes the one its kind belongs to.
// Roles and ClusterRoles have no defaults.

// defaultRoleBinding fills a RoleBinding's roleRef and subject groups.
func defaultRoleBinding(obj runtime.Object) {
	rb := obj.(*rbacv1.RoleBinding)
	defaultBindingGroups(&rb.RoleRef, rb.Subjects)
}

// defaultClusterRoleBinding fills a ClusterRoleBinding's roleRef and
// subject groups.
func defaultClusterRoleBinding(obj runtime.Object) {
	crb := obj.(*rbacv1.ClusterRoleBinding)
	defaultBindingGroups(&crb.RoleRef, crb.Subjects)
}

func defaultBindingGroups(ref *rbacv1.RoleRef, subjects []rbacv1.Subject) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup != "" {
			continue
		}
		// A ServiceAccount lives in the core group, whose name is empty;
		// users and groups are RBAC's own; any other kind is left for
		// validation to refuse.
		if s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind {
			s.APIGroup = rbacv1.GroupName
		}
	}
}
