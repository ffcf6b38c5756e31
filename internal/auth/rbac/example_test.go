package rbac_test

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/rbac"
)

func Example() {
	view := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "alice-view"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}}

	authz := rbac.New(rbac.NewSnapshot(nil, []*rbacv1.ClusterRole{view}, []*rbacv1.RoleBinding{binding}, nil))

	for _, verb := range []string{"list", "delete"} {
		a := auth.Attributes{User: authenticationv1.UserInfo{Username: "alice"}, ResourceRequest: true,
			Verb: verb, Resource: "pods", Namespace: "default"}
		d, reason, _ := authz.Authorize(context.Background(), a)
		if d == auth.DecisionAllow {
			fmt.Println(reason)
			continue
		}
		fmt.Println(auth.Forbidden(a, reason).ErrStatus.Message)
	}
	// Output:
	// RBAC: allowed by RoleBinding "alice-view/default" of ClusterRole "view" to User "alice"
	// pods is forbidden: User "alice" cannot delete resource "pods" in API group "" in the namespace "default"
}
