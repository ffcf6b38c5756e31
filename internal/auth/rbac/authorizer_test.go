package rbac

import (
	"context"
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/auth"
)

func objectMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}

func user(name string) rbacv1.Subject  { return rbacv1.Subject{Kind: rbacv1.UserKind, Name: name} }
func group(name string) rbacv1.Subject { return rbacv1.Subject{Kind: rbacv1.GroupKind, Name: name} }
func sa(ns, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
}

func crb(name, role string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: objectMeta("", name), Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
}

func rb(ns, name, kind, role string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: objectMeta(ns, name), Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role}}
}

// testPolicy: a reader ClusterRole, a pod-writer Role in ns1 and the
// bindings the cases below use.
func testPolicy() *Snapshot {
	roles := []*rbacv1.Role{
		{ObjectMeta: objectMeta("ns1", "pod-writer"), Rules: []rbacv1.PolicyRule{rule(l("create", "delete"), l(""), l("pods"))}},
	}
	clusterRoles := []*rbacv1.ClusterRole{
		{ObjectMeta: objectMeta("", "reader"), Rules: []rbacv1.PolicyRule{rule(l("get", "list"), l("", "apps"), l("*"))}},
		{ObjectMeta: objectMeta("", "healthz"), Rules: []rbacv1.PolicyRule{{Verbs: l("get"), NonResourceURLs: l("/healthz")}}},
	}
	roleBindings := []*rbacv1.RoleBinding{
		rb("ns1", "writers", "Role", "pod-writer", user("bob"), sa("", "builder")),
		rb("ns1", "readers", "ClusterRole", "reader", group("ns1-readers")),
		rb("ns1", "missing", "Role", "no-such-role", user("carol")),
		rb("ns2", "cross", "ClusterRole", "reader", sa("ns1", "builder")),
	}
	clusterRoleBindings := []*rbacv1.ClusterRoleBinding{
		crb("alice-reads", "reader", user("x"), user("alice")),
		crb("health", "healthz", group("system:authenticated")),
		crb("sa-without-namespace", "reader", sa("", "builder")),
		crb("dangling", "no-such-clusterrole", user("carol")),
	}
	return NewSnapshot(roles, clusterRoles, roleBindings, clusterRoleBindings)
}

func as(name string, groups ...string) authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: name, Groups: groups}
}

func TestAuthorize(t *testing.T) {
	const builder = "system:serviceaccount:ns1:builder"
	tests := []struct {
		name       string
		user       authenticationv1.UserInfo
		attrs      auth.Attributes
		ns         string
		want       auth.Decision
		wantReason string
	}{
		{"cluster binding, second subject", as("alice"), res("list", "apps", "deployments", "", ""), "default",
			auth.DecisionAllow, `RBAC: allowed by ClusterRoleBinding "alice-reads" of ClusterRole "reader" to User "alice"`},
		{"cluster binding at cluster scope", as("alice"), res("get", "", "nodes", "", "n1"), "",
			auth.DecisionAllow, `RBAC: allowed by ClusterRoleBinding "alice-reads" of ClusterRole "reader" to User "alice"`},
		{"verb not granted", as("alice"), res("delete", "", "pods", "", ""), "default", auth.DecisionNoOpinion, ""},
		{"role binding", as("bob"), res("create", "", "pods", "", ""), "ns1",
			auth.DecisionAllow, `RBAC: allowed by RoleBinding "writers/ns1" of Role "pod-writer" to User "bob"`},
		{"role binding elsewhere", as("bob"), res("create", "", "pods", "", ""), "ns2", auth.DecisionNoOpinion, ""},
		{"role binding at cluster scope", as("bob"), res("create", "", "pods", "", ""), "", auth.DecisionNoOpinion, ""},
		{"group via cluster role in namespace", as("dave", "ns1-readers"), res("get", "", "secrets", "", ""), "ns1",
			auth.DecisionAllow, `RBAC: allowed by RoleBinding "readers/ns1" of ClusterRole "reader" to Group "ns1-readers"`},
		{"service account defaulted to binding namespace", as(builder), res("delete", "", "pods", "", ""), "ns1",
			auth.DecisionAllow, `RBAC: allowed by RoleBinding "writers/ns1" of Role "pod-writer" to ServiceAccount "builder/ns1"`},
		{"service account in another namespace's binding", as(builder), res("get", "", "pods", "", ""), "ns2",
			auth.DecisionAllow, `RBAC: allowed by RoleBinding "cross/ns2" of ClusterRole "reader" to ServiceAccount "builder/ns1"`},
		{"service account without namespace in a cluster binding names no one", as("system:serviceaccount::builder"),
			res("get", "", "pods", "", ""), "", auth.DecisionNoOpinion, ""},
		{"non-resource", as("eve", "system:authenticated"), path("get", "/healthz"), "",
			auth.DecisionAllow, `RBAC: allowed by ClusterRoleBinding "health" of ClusterRole "healthz" to Group "system:authenticated"`},
		{"unresolved roles are the reason", as("carol"), res("get", "", "pods", "", ""), "ns1", auth.DecisionNoOpinion,
			`RBAC: [clusterrole.rbac.authorization.k8s.io "no-such-clusterrole" not found, role.rbac.authorization.k8s.io "no-such-role" not found]`},
		{"one unresolved role", as("carol"), res("get", "", "pods", "", ""), "", auth.DecisionNoOpinion,
			`RBAC: clusterrole.rbac.authorization.k8s.io "no-such-clusterrole" not found`},
		{"nobody", as("nobody"), res("get", "", "pods", "", ""), "ns1", auth.DecisionNoOpinion, ""},
	}
	authz := New(testPolicy())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.attrs
			a.User, a.Namespace = tc.user, tc.ns
			d, reason, err := authz.Authorize(context.Background(), a)
			if err != nil || d != tc.want || reason != tc.wantReason {
				t.Errorf("Authorize(%+v) = %v, %q, %v; want %v, %q, nil", a, d, reason, err, tc.want, tc.wantReason)
			}
		})
	}
}

func TestAuthorizerSwapsSnapshots(t *testing.T) {
	a := auth.Attributes{User: as("alice"), ResourceRequest: true, Verb: "get", Resource: "pods", Namespace: "x"}
	var authz Authorizer
	if d, _, _ := authz.Authorize(context.Background(), a); d != auth.DecisionNoOpinion {
		t.Fatalf("zero Authorizer: Authorize = %v, want NoOpinion", d)
	}
	authz.Store(testPolicy())
	if d, _, _ := authz.Authorize(context.Background(), a); d != auth.DecisionAllow {
		t.Fatalf("after Store(policy): Authorize = %v, want Allow", d)
	}
	authz.Store(NewSnapshot(nil, nil, nil, nil))
	if d, _, _ := authz.Authorize(context.Background(), a); d != auth.DecisionNoOpinion {
		t.Fatalf("after Store(empty): Authorize = %v, want NoOpinion", d)
	}
}

func TestRulesFor(t *testing.T) {
	s := testPolicy()
	rules, err := s.RulesFor(as("system:serviceaccount:ns1:builder"), "ns1")
	if err != nil || len(rules) != 1 || !slices.Equal(rules[0].Verbs, l("create", "delete")) {
		t.Errorf("RulesFor(builder, ns1) = %v, %v; want the pod-writer rule", rules, err)
	}
	rules, err = s.RulesFor(as("carol"), "ns1")
	if len(rules) != 0 || err == nil {
		t.Errorf("RulesFor(carol, ns1) = %v, %v; want no rules and an error", rules, err)
	}
	// ClusterRoleBindings come first, then the namespace's RoleBindings.
	rules, _ = s.RulesFor(as("alice", "ns1-readers", "system:authenticated"), "ns1")
	if len(rules) != 3 || rules[1].NonResourceURLs == nil {
		t.Errorf("RulesFor(alice, ns1) = %v; want reader, healthz, reader", rules)
	}
}

// TestConcurrentStore: decisions read whole snapshots while others are
// stored (run with -race).
func TestConcurrentStore(t *testing.T) {
	authz := New(testPolicy())
	a := auth.Attributes{User: as("alice"), ResourceRequest: true, Verb: "get", Resource: "pods", Namespace: "x"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			if i%2 == 0 {
				authz.Store(testPolicy())
			} else {
				authz.Store(NewSnapshot(nil, nil, nil, nil))
			}
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		if d, reason, _ := authz.Authorize(context.Background(), a); d == auth.DecisionAllow && reason == "" {
			t.Fatal("Authorize allowed without a reason")
		}
	}
}
