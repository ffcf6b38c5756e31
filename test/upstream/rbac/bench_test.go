package rbac

import (
	"context"
	"fmt"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/admitd/admitd/internal/auth"
)

// benchPolicy: n bindings of other users, half cluster-wide and half in the
// request's namespace, plus the one RoleBinding that allows the request.
func benchPolicy(n int) policy {
	edit := clusterRole("edit", ruleOf("get,list,watch", "", "configmaps,secrets", ""), ruleOf("get,list,create,delete", "", "pods,pods/log", ""))
	p := policy{clusterRoles: []*rbacv1.ClusterRole{edit}}
	for i := range n {
		name, who := fmt.Sprint("other-", i), fmt.Sprint("User:user-", i)
		if i%2 == 0 {
			b := bindClusterRole("edit", who, fmt.Sprint("Group:group-", i))
			b.Name = name
			p.clusterRoleBindings = append(p.clusterRoleBindings, b)
			continue
		}
		b := bindInNamespace("team", "ClusterRole", "edit", who)
		b.Name = name
		p.roleBindings = append(p.roleBindings, b)
	}
	p.roleBindings = append(p.roleBindings, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "alice"},
		Subjects: subjects("User:alice"), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"}})
	return p
}

var benchRequest = auth.Attributes{User: authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}},
	ResourceRequest: true, Verb: "delete", Resource: "pods", Namespace: "team", Name: "p"}

func benchmarkOurs(b *testing.B, n int) {
	ours := benchPolicy(n).ours()
	ctx := context.Background()
	if d, _, _ := ours.Authorize(ctx, benchRequest); d != auth.DecisionAllow {
		b.Fatalf("Authorize = %v, want Allow", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		ours.Authorize(ctx, benchRequest)
	}
}

// benchmarkUpstream runs upstream's authorizer as kube-apiserver wires it,
// over informer listers.
func benchmarkUpstream(b *testing.B, n int) {
	theirs := benchPolicy(n).listers(b).authorizer()
	a := upstreamAttributes(benchRequest)
	ctx := context.Background()
	if d, _, _ := theirs.Authorize(ctx, a); d != authorizer.DecisionAllow {
		b.Fatalf("Authorize = %v, want Allow", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		theirs.Authorize(ctx, a)
	}
}

func BenchmarkOurs_10Bindings(b *testing.B)       { benchmarkOurs(b, 10) }
func BenchmarkOurs_1000Bindings(b *testing.B)     { benchmarkOurs(b, 1000) }
func BenchmarkUpstream_10Bindings(b *testing.B)   { benchmarkUpstream(b, 10) }
func BenchmarkUpstream_1000Bindings(b *testing.B) { benchmarkUpstream(b, 1000) }
