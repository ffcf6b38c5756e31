package bootstrap_test

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/rbac"
	"github.com/admitd/admitd/internal/auth/rbac/bootstrap"
)

// snapshot of the bootstrap policy, its aggregated ClusterRoles filled in,
// plus extra RoleBindings.
func snapshot(t *testing.T, extra ...*rbacv1.RoleBinding) *rbac.Snapshot {
	t.Helper()
	p, err := bootstrap.Load()
	if err != nil {
		t.Fatal(err)
	}
	var crs []*rbacv1.ClusterRole
	for i := range p.ClusterRoles {
		crs = append(crs, &p.ClusterRoles[i])
	}
	for _, agg := range crs {
		if agg.AggregationRule == nil {
			continue
		}
		for _, sel := range agg.AggregationRule.ClusterRoleSelectors {
			s, err := metav1.LabelSelectorAsSelector(&sel)
			if err != nil {
				t.Fatal(err)
			}
			for _, cr := range crs {
				if cr != agg && s.Matches(labels.Set(cr.Labels)) {
					agg.Rules = append(agg.Rules, cr.Rules...)
				}
			}
		}
	}
	var crbs []*rbacv1.ClusterRoleBinding
	for i := range p.ClusterRoleBindings {
		crbs = append(crbs, &p.ClusterRoleBindings[i])
	}
	var roles []*rbacv1.Role
	for i := range p.Roles {
		roles = append(roles, &p.Roles[i])
	}
	rbs := extra
	for i := range p.RoleBindings {
		rbs = append(rbs, &p.RoleBindings[i])
	}
	return rbac.NewSnapshot(roles, crs, rbs, crbs)
}

func TestLoad(t *testing.T) {
	p, err := bootstrap.Load()
	if err != nil {
		t.Fatalf("Load() = %v", err)
	}
	names := map[string]bool{}
	for _, cr := range p.ClusterRoles {
		names[cr.Name] = true
		if cr.Kind != "ClusterRole" || cr.Labels["kubernetes.io/bootstrapping"] != "rbac-defaults" {
			t.Errorf("ClusterRole %s: kind %q, labels %v; want ClusterRole with the bootstrap label", cr.Name, cr.Kind, cr.Labels)
		}
	}
	for _, want := range []string{"cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user",
		"system:public-info-viewer", "system:node", "system:controller:namespace-controller"} {
		if !names[want] {
			t.Errorf("Load(): no ClusterRole %q", want)
		}
	}
	p.ClusterRoles = nil
	if again, _ := bootstrap.Load(); len(again.ClusterRoles) == 0 {
		t.Error("Load() shares its result with later calls")
	}
}

func TestBootstrapDecisions(t *testing.T) {
	editor := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "carol-edit"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "carol"}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"}}
	s := snapshot(t, editor)
	authd := []string{"system:authenticated"}
	tests := []struct {
		name   string
		user   string
		groups []string
		attrs  auth.Attributes
		want   auth.Decision
	}{
		{"masters do anything", "root", []string{"system:masters"},
			auth.Attributes{ResourceRequest: true, Verb: "delete", APIGroup: "x.io", Resource: "widgets"}, auth.DecisionAllow},
		{"discovery for the authenticated", "alice", authd, auth.Attributes{Verb: "get", Path: "/apis/apps"}, auth.DecisionAllow},
		{"no discovery for anonymous", "system:anonymous", []string{"system:unauthenticated"},
			auth.Attributes{Verb: "get", Path: "/api"}, auth.DecisionNoOpinion},
		{"version for anonymous", "system:anonymous", []string{"system:unauthenticated"},
			auth.Attributes{Verb: "get", Path: "/version"}, auth.DecisionAllow},
		{"self reviews", "alice", authd, auth.Attributes{ResourceRequest: true, Verb: "create",
			APIGroup: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}, auth.DecisionAllow},
		{"edit creates pods in its namespace", "carol", authd,
			auth.Attributes{ResourceRequest: true, Verb: "create", Resource: "pods", Namespace: "team"}, auth.DecisionAllow},
		{"edit does not write roles", "carol", authd, auth.Attributes{ResourceRequest: true, Verb: "create",
			APIGroup: "rbac.authorization.k8s.io", Resource: "roles", Namespace: "team"}, auth.DecisionNoOpinion},
		{"edit not elsewhere", "carol", authd,
			auth.Attributes{ResourceRequest: true, Verb: "create", Resource: "pods", Namespace: "prod"}, auth.DecisionNoOpinion},
		// The system:node binding has no subjects: the Node authorizer answers
		// for kubelets.
		{"RBAC leaves nodes to the Node authorizer", "system:node:n1", []string{"system:nodes", "system:authenticated"},
			auth.Attributes{ResourceRequest: true, Verb: "get", Resource: "nodes", Name: "n1"}, auth.DecisionNoOpinion},
		{"the scheduler binds pods", "system:kube-scheduler", authd, auth.Attributes{ResourceRequest: true, Verb: "create",
			Resource: "pods", Subresource: "binding", Namespace: "team"}, auth.DecisionAllow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.attrs
			a.User = authenticationv1.UserInfo{Username: tc.user, Groups: tc.groups}
			if d, reason, _ := s.Authorize(context.Background(), a); d != tc.want {
				t.Errorf("Authorize(%+v) = %v (%s), want %v", a, d, reason, tc.want)
			}
		})
	}
}

// BenchmarkLoad is the decoding every server start does twice (the RBAC
// reconcile and the Node authorizer's rules).
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := bootstrap.Load(); err != nil {
			b.Fatal(err)
		}
	}
}
