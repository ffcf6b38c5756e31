package rbac

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/admitd/admitd/internal/auth"
)

// benchPolicy: n bindings of other users and groups, each in a namespace of
// its own or cluster-wide, plus the one RoleBinding that allows the request
// and the bootstrap-like group bindings every user meets.
func benchPolicy(n int) *Snapshot {
	clusterRoles := []*rbacv1.ClusterRole{
		{ObjectMeta: objectMeta("", "edit"), Rules: []rbacv1.PolicyRule{
			rule(l("get", "list", "watch"), l(""), l("configmaps", "secrets", "services")),
			rule(l("get", "list", "watch", "create", "delete"), l(""), l("pods", "pods/log")),
		}},
		{ObjectMeta: objectMeta("", "discovery"), Rules: []rbacv1.PolicyRule{{Verbs: l("get"), NonResourceURLs: l("/api", "/api/*", "/apis", "/apis/*")}}},
	}
	var rbs []*rbacv1.RoleBinding
	var crbs []*rbacv1.ClusterRoleBinding
	crbs = append(crbs, crb("discovery", "discovery", group("system:authenticated")))
	for i := range n {
		if i%2 == 0 {
			crbs = append(crbs, crb(fmt.Sprint("other-", i), "edit", user(fmt.Sprint("user-", i)), group(fmt.Sprint("group-", i))))
		} else {
			rbs = append(rbs, rb("team", fmt.Sprint("other-", i), "ClusterRole", "edit", user(fmt.Sprint("user-", i))))
		}
	}
	rbs = append(rbs, rb("team", "alice-edit", "ClusterRole", "edit", user("alice")))
	return NewSnapshot(nil, clusterRoles, rbs, crbs)
}

func benchmarkAuthorize(b *testing.B, n int) {
	authz := New(benchPolicy(n))
	a := auth.Attributes{User: as("alice", "system:authenticated"), ResourceRequest: true,
		Verb: "delete", Resource: "pods", Namespace: "team", Name: "p"}
	ctx := context.Background()
	if d, _, _ := authz.Authorize(ctx, a); d != auth.DecisionAllow {
		b.Fatalf("Authorize = %v, want Allow", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		authz.Authorize(ctx, a)
	}
}

func BenchmarkAuthorize_10Bindings(b *testing.B)   { benchmarkAuthorize(b, 10) }
func BenchmarkAuthorize_1000Bindings(b *testing.B) { benchmarkAuthorize(b, 1000) }
func BenchmarkAuthorize_100000Bindings(b *testing.B) {
	benchmarkAuthorize(b, 100000)
}
