package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestRulesReview(t *testing.T) {
	mixed := rule(l("get"), l(""), l("pods"))
	mixed.NonResourceURLs = l("/healthz")
	s := NewSnapshot(nil, []*rbacv1.ClusterRole{
		{ObjectMeta: objectMeta("", "mixed"), Rules: []rbacv1.PolicyRule{mixed, {Verbs: l("get"), NonResourceURLs: l("/api")}}},
	}, []*rbacv1.RoleBinding{
		rb("ns1", "m", "ClusterRole", "mixed", user("alice")),
		rb("ns1", "gone", "Role", "gone", user("alice")),
	}, nil)
	res, nonRes, incomplete, err := s.RulesReview(as("alice"), "ns1")
	if len(res) != 1 || res[0].Resources[0] != "pods" || len(nonRes) != 2 || nonRes[1].NonResourceURLs[0] != "/api" || incomplete {
		t.Errorf("RulesReview(alice, ns1) = %v, %v, %v; want pods, then /healthz and /api", res, nonRes, incomplete)
	}
	if err == nil || err.Error() != `role.rbac.authorization.k8s.io "gone" not found` {
		t.Errorf("RulesReview(alice, ns1) error = %v, want the missing Role", err)
	}
	if res, nonRes, _, err := s.RulesReview(as("alice"), "ns2"); res != nil || nonRes != nil || err != nil {
		t.Errorf("RulesReview(alice, ns2) = %v, %v, %v; want nothing", res, nonRes, err)
	}
}
