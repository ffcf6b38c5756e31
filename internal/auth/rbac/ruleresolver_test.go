package rbac

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// The resolver answers from the snapshot the authorizer holds now, not the
// one it was built with.
func TestRuleResolverFollowsStore(t *testing.T) {
	view := &rbacv1.ClusterRole{ObjectMeta: objectMeta("", "view"), Rules: []rbacv1.PolicyRule{rule(l("get"), l(""), l("pods"))}}
	a := New(NewSnapshot(nil, nil, nil, nil))
	resolver := ReviewRuleResolver(a)
	if res, _, _, _ := resolver.RulesFor(context.Background(), as("alice"), "ns1"); len(res) != 0 {
		t.Fatalf("RulesFor(alice, ns1) with no bindings = %v, want none", res)
	}
	a.Store(NewSnapshot(nil, []*rbacv1.ClusterRole{view}, []*rbacv1.RoleBinding{rb("ns1", "v", "ClusterRole", "view", user("alice"))}, nil))
	res, nonRes, incomplete, err := resolver.RulesFor(context.Background(), as("alice"), "ns1")
	if len(res) != 1 || res[0].Resources[0] != "pods" || len(nonRes) != 0 || incomplete || err != nil {
		t.Errorf("RulesFor(alice, ns1) = %v, %v, %v, %v; want get pods only", res, nonRes, incomplete, err)
	}
}
