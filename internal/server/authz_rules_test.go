package server

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/rbac"
)

// The server's authorizer lists RBAC's rules (SelfSubjectRulesReview reads
// them through auth.RulesReviewer).
func TestAuthorizerListsRBACRules(t *testing.T) {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Rules: []rbacv1.PolicyRule{getPods}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "r"},
		Subjects: []rbacv1.Subject{user("hana")}}
	policy := rbac.New(rbac.NewSnapshot(nil, []*rbacv1.ClusterRole{role}, nil, []*rbacv1.ClusterRoleBinding{binding}))
	authz := newAuthorizer([]string{auth.ModeRBAC}, modeAuthorizers{rbac: policy}, prometheus.NewRegistry())
	rr, ok := authz.(auth.RulesReviewer)
	if !ok {
		t.Fatalf("the server's authorizer %T lists no rules", authz)
	}
	res, _, _, err := rr.RulesReview(authenticationv1.UserInfo{Username: "hana"}, "ns")
	if err != nil || len(res) != 1 || res[0].Resources[0] != "pods" || res[0].Verbs[0] != "get" {
		t.Errorf("RulesReview(hana) = %v, %v; want get pods", res, err)
	}
}
