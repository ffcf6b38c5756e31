package registry

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Decoding defaults of the RBAC bindings (upstream
// pkg/apis/rbac/v1/defaults.go): a roleRef without apiGroup names an RBAC
// role, and a User or Group subject without apiGroup is an RBAC subject (a
// ServiceAccount's apiGroup stays the core group's "").

func defaultRoleBinding(obj runtime.Object) {
	rb := obj.(*rbacv1.RoleBinding)
	defaultRoleRef(&rb.RoleRef)
	defaultSubjects(rb.Subjects)
}

func defaultClusterRoleBinding(obj runtime.Object) {
	crb := obj.(*rbacv1.ClusterRoleBinding)
	defaultRoleRef(&crb.RoleRef)
	defaultSubjects(crb.Subjects)
}

func defaultRoleRef(ref *rbacv1.RoleRef) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
}

func defaultSubjects(subjects []rbacv1.Subject) {
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}
