package rbac

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/admitd/admitd/internal/auth"
)

// benchObjects: n bindings of other users and groups, half cluster-wide and
// half in the request's namespace, plus the one RoleBinding that allows the
// request and a discovery binding every authenticated user meets.
func benchObjects(n int) ([]*rbacv1.ClusterRole, []*rbacv1.RoleBinding, []*rbacv1.ClusterRoleBinding) {
	clusterRoles := []*rbacv1.ClusterRole{
		{ObjectMeta: objectMeta("", "edit"), Rules: []rbacv1.PolicyRule{
			rule(l("get", "list", "watch"), l(""), l("configmaps", "secrets", "services")),
			rule(l("get", "list", "watch", "create", "delete"), l(""), l("pods", "pods/log")),
		}},
		{ObjectMeta: objectMeta("", "discovery"), Rules: []rbacv1.PolicyRule{{Verbs: l("get"), NonResourceURLs: l("/api", "/api/*", "/apis", "/apis/*")}}},
	}
	var rbs []*rbacv1.RoleBinding
	crbs := []*rbacv1.ClusterRoleBinding{crb("discovery", "discovery", group("system:authenticated"))}
	for i := range n {
		if i%2 == 0 {
			crbs = append(crbs, crb(fmt.Sprint("other-", i), "edit", user(fmt.Sprint("user-", i)), group(fmt.Sprint("group-", i))))
		} else {
			rbs = append(rbs, rb("team", fmt.Sprint("other-", i), "ClusterRole", "edit", user(fmt.Sprint("user-", i))))
		}
	}
	rbs = append(rbs, rb("team", "alice-edit", "ClusterRole", "edit", user("alice")))
	return clusterRoles, rbs, crbs
}

func benchPolicy(n int) *Snapshot {
	crs, rbs, crbs := benchObjects(n)
	return NewSnapshot(nil, crs, rbs, crbs)
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

// benchmarkNewSnapshot: what a watch-fed cache pays to rebuild on a change.
func benchmarkNewSnapshot(b *testing.B, n int) {
	crs, rbs, crbs := benchObjects(n)
	b.ReportAllocs()
	for b.Loop() {
		NewSnapshot(nil, crs, rbs, crbs)
	}
}

func BenchmarkNewSnapshot_1000Bindings(b *testing.B)  { benchmarkNewSnapshot(b, 1000) }
func BenchmarkNewSnapshot_10000Bindings(b *testing.B) { benchmarkNewSnapshot(b, 10000) }
