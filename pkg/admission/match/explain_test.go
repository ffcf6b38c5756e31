package match_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

// Why names the check and the values compared for each skip reason.
func TestWhy(t *testing.T) {
	pods := v1.RuleWithOperations{Operations: []v1.OperationType{v1.Create}, Rule: v1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}
	cluster := pods
	cluster.Scope = ptrScope(v1.ClusterScope)
	deployments := v1.RuleWithOperations{Operations: []v1.OperationType{v1.Create, v1.Update}, Rule: v1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"*"}, Resources: []string{"deployments", "deployments/scale"}}}
	sel := func(k, v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
	}
	all := &metav1.LabelSelector{}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a", Labels: map[string]string{"app": "web"}}}
	for _, tc := range []struct {
		name     string
		criteria *match.Criteria
		reason   match.Reason
		want     string
	}{
		{"namespaceSelector", match.Webhook([]v1.RuleWithOperations{pods}, nil, sel("team", "b"), all), match.SkipNamespaceSelector,
			`namespaceSelector "team=b" does not select namespace "team-a" (labels: kubernetes.io/metadata.name=team-a,team=a)`},
		{"objectSelector", match.Webhook([]v1.RuleWithOperations{pods}, nil, all, sel("app", "db")), match.SkipObjectSelector,
			`objectSelector "app=db" selects neither the object (labels: app=web) nor the old object (labels: none)`},
		{"rule", match.Webhook([]v1.RuleWithOperations{deployments}, nil, all, all), match.SkipRule,
			`no rule of [CREATE,UPDATE apps/* deployments,deployments/scale] matches CREATE pods v1`},
		{"scope", match.Webhook([]v1.RuleWithOperations{cluster}, nil, all, all), match.SkipScope,
			`rules [CREATE ""/v1 pods (Cluster)] match CREATE pods v1 except for their scope (the request is namespaced)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespaces(namespaceObj("team-a", map[string]string{"team": "a", "kubernetes.io/metadata.name": "team-a"}))
			a := &admission.Attributes{Operation: admission.Create, Resource: gvr("", "v1", "pods"), Kind: gvk("", "v1", "Pod"),
				Namespace: "team-a", Name: "web", Object: pod, Record: admission.NewRecord()}
			mr := match.NewRequest(context.Background(), match.Env{Namespaces: ns}, a)
			d := tc.criteria.Match(&mr)
			if d.Reason != tc.reason {
				t.Fatalf("Match = %v, want %v", d.Reason, tc.reason)
			}
			if got := tc.criteria.Why(&mr, d).Explain(); got != tc.want {
				t.Errorf("Why =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func ptrScope(s v1.ScopeType) *v1.ScopeType { return &s }
