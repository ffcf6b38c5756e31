package rbac

import (
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/auth"
)

// Cases in the shape of upstream's own authorizer tests: a policy, requests
// that must pass and requests that must not. Both sides must agree with the
// expectation, and with each other.

func csv(s string) []string { return strings.Split(s, ",") }

func ruleOf(verbs, groups, resources, urls string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: csv(verbs), APIGroups: csv(groups), Resources: csv(resources), NonResourceURLs: csv(urls)}
}

func clusterRole(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

// subjects parses "Kind:name" (ServiceAccount:ns:name for a namespaced one).
func subjects(specs ...string) []rbacv1.Subject {
	var out []rbacv1.Subject
	for _, s := range specs {
		kind, name, _ := strings.Cut(s, ":")
		sub := rbacv1.Subject{Kind: kind, Name: name}
		if ns, n, ok := strings.Cut(name, ":"); ok && kind == rbacv1.ServiceAccountKind {
			sub.Namespace, sub.Name = ns, n
		}
		out = append(out, sub)
	}
	return out
}

func bindClusterRole(role string, specs ...string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role + "-binding"}, Subjects: subjects(specs...),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
}

func bindInNamespace(ns, kind, role string, specs ...string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: role + "-binding"}, Subjects: subjects(specs...),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role}}
}

// req: "user[,group...] verb group:resource[/sub] [namespace]", or
// "user[,group...] verb /path".
func req(spec string) auth.Attributes {
	f := strings.Fields(spec)
	names := csv(f[0])
	a := auth.Attributes{User: authenticationv1.UserInfo{Username: names[0], Groups: names[1:]}, Verb: f[1]}
	if strings.HasPrefix(f[2], "/") {
		a.Path = f[2]
		return a
	}
	a.ResourceRequest = true
	group, resource, _ := strings.Cut(f[2], ":")
	a.APIGroup = group
	a.Resource, a.Subresource, _ = strings.Cut(resource, "/")
	if len(f) > 3 {
		a.Namespace = f[3]
	}
	return a
}

func TestUpstreamShapedTables(t *testing.T) {
	tests := []struct {
		name             string
		policy           policy
		shouldPass, fail []string
	}{{
		name: "namespace admin through a ClusterRole",
		policy: policy{
			clusterRoles: []*rbacv1.ClusterRole{clusterRole("admin", ruleOf("*", "*", "*", "*"))},
			roleBindings: []*rbacv1.RoleBinding{bindInNamespace("ns1", "ClusterRole", "admin", "User:admin", "Group:admins")},
		},
		shouldPass: []string{"admin get :Pods ns1", "admin watch :Pods ns1", "admin,group1 watch :Foobar ns1",
			"joe,admins watch :Foobar ns1", "joe,group1,admins watch :Foobar ns1"},
		fail: []string{"admin GET :Pods ns2", "admin GET :Nodes", "admin,admins GET :Pods ns2", "admin,admins GET :Nodes"},
	}, {
		name: "non-resource URLs, exact and prefixed",
		policy: policy{
			clusterRoles: []*rbacv1.ClusterRole{
				clusterRole("url-getter", ruleOf("get", "", "", "/apis")),
				clusterRole("url-any", ruleOf("*", "", "", "/apis")),
				clusterRole("url-prefix", ruleOf("get", "", "", "/apis/*")),
			},
			clusterRoleBindings: []*rbacv1.ClusterRoleBinding{
				bindClusterRole("url-getter", "User:foo", "Group:bar"),
				bindClusterRole("url-any", "User:admin", "Group:admin"),
				bindClusterRole("url-prefix", "User:prefixed", "Group:prefixed"),
			},
		},
		shouldPass: []string{"foo get /apis", ",bar get /apis", "admin watch /apis", ",admin watch /apis",
			"prefixed get /apis/v1", ",prefixed get /apis/v1/foobar"},
		fail: []string{"foo watch /apis", ",bar watch /apis", "foo get /api/v1", "admin get /api/v1", "prefixed get /api/v1"},
	}, {
		name: "a resource rule does not grant its subresources",
		policy: policy{
			clusterRoles: []*rbacv1.ClusterRole{clusterRole("admin", ruleOf("*", "*", "pods", "*"))},
			roleBindings: []*rbacv1.RoleBinding{bindInNamespace("ns1", "ClusterRole", "admin", "User:admin")},
		},
		shouldPass: []string{"admin get :pods ns1"},
		fail:       []string{"admin get :pods/status ns1"},
	}, {
		name: "resource/subresource and */subresource",
		policy: policy{
			clusterRoles: []*rbacv1.ClusterRole{clusterRole("admin", ruleOf("*", "*", "pods/status", "*"), ruleOf("*", "*", "*/scale", "*"))},
			roleBindings: []*rbacv1.RoleBinding{bindInNamespace("ns1", "ClusterRole", "admin", "User:admin")},
		},
		shouldPass: []string{"admin get :pods/status ns1", "admin get :pods/scale ns1", "admin get apps:deployments/scale ns1",
			"admin get x:anything/scale ns1"},
		fail: []string{"admin get :pods ns1", "admin get :pods/log ns1"},
	}, {
		name: "service accounts: explicit namespace, binding's namespace, none in a ClusterRoleBinding",
		policy: policy{
			clusterRoles: []*rbacv1.ClusterRole{clusterRole("reader", ruleOf("get", "", "pods", ""))},
			roleBindings: []*rbacv1.RoleBinding{
				bindInNamespace("ns1", "ClusterRole", "reader", "ServiceAccount:local"),
				bindInNamespace("ns2", "ClusterRole", "reader", "ServiceAccount:ns1:remote"),
			},
			clusterRoleBindings: []*rbacv1.ClusterRoleBinding{bindClusterRole("reader", "ServiceAccount:nowhere")},
		},
		shouldPass: []string{"system:serviceaccount:ns1:local get :pods ns1", "system:serviceaccount:ns1:remote get :pods ns2"},
		fail: []string{"system:serviceaccount:ns2:local get :pods ns2", "system:serviceaccount:ns1:local get :pods",
			"system:serviceaccount::nowhere get :pods", "system:serviceaccount:ns1:nowhere get :pods ns1"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ours, static := tc.policy.ours(), tc.policy.static()
			for want, specs := range map[auth.Decision][]string{auth.DecisionAllow: tc.shouldPass, auth.DecisionNoOpinion: tc.fail} {
				for _, spec := range specs {
					if d := checkSame(t, tc.name, ours, static, req(spec)); d != want {
						t.Errorf("Authorize(%s) = %v, want %v", spec, d, want)
					}
				}
			}
		})
	}
}
