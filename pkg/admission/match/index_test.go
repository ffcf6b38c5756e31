package match_test

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

func TestIndexCandidates(t *testing.T) {
	hook := func(mp *v1.MatchPolicyType, g, res string) *match.Criteria {
		return match.Webhook([]v1.RuleWithOperations{rule(all(), []string{g}, all(), []string{res}, "")}, mp, everything, everything)
	}
	eq, exact := ptr(v1.Equivalent), ptr(v1.Exact)
	cs := []*match.Criteria{
		0: hook(nil, "", "pods"),
		1: hook(nil, "*", "*/*"),
		2: hook(eq, "apps", "deployments"),
		3: hook(eq, "extensions", "deployments/scale"),
		4: hook(exact, "extensions", "deployments"),
		5: match.Policy(nil), // configuration error: always visited
		6: match.Binding(nil),
		7: hook(nil, "*", "pods/*"),
		8: hook(nil, "", "*"),
		9: match.Webhook(nil, nil, everything, everything),
		10: match.Webhook([]v1.RuleWithOperations{rule(nil, all(), all(), all(), "")}, nil, everything, everything), // no operations
		11: match.Policy(&v1.MatchResources{MatchPolicy: eq, NamespaceSelector: everything, ObjectSelector: everything,
			ResourceRules:        []v1.NamedRuleWithOperations{named(nil, rule(all(), all(), all(), []string{"secrets"}, ""))},
			ExcludeResourceRules: []v1.NamedRuleWithOperations{named(nil, rule(all(), []string{"extensions"}, all(), []string{"deployments"}, ""))}}),
	}
	ix := match.NewIndex(cs)
	if ix.Len() != len(cs) {
		t.Fatalf("Len() = %d, want %d", ix.Len(), len(cs))
	}
	env := match.Env{Equivalents: deploymentsMapper()}
	tests := []struct {
		res  schema.GroupVersionResource
		sub  string
		want []int32
	}{
		{gvr("", "v1", "pods"), "", []int32{0, 1, 5, 6, 7, 8}},
		{gvr("", "v1", "pods"), "exec", []int32{0, 1, 5, 6, 7, 8}},
		{gvr("", "v1", "configmaps"), "", []int32{1, 5, 6, 8}},
		{gvr("apps", "v1", "deployments"), "", []int32{1, 2, 3, 5, 6, 11}},
		{gvr("extensions", "v1beta1", "deployments"), "", []int32{1, 2, 3, 4, 5, 6}},
		{gvr("example.com", "v1", "widgets"), "", []int32{1, 5, 6}},
	}
	buf := make([]int32, 0, 16)
	for _, tt := range tests {
		a := attrs(admission.Create, "ns", "n", tt.res, tt.sub, schema.GroupVersionKind{})
		r := match.NewRequest(context.Background(), env, a)
		if got := ix.Candidates(&r, buf[:0]); !slices.Equal(got, tt.want) {
			t.Errorf("Candidates(%v %q) = %v, want %v", tt.res, tt.sub, got, tt.want)
		}
		checkIndex(t, ix, cs, env, a)
	}

	t.Run("no equivalents catalogue", func(t *testing.T) {
		a := attrs(admission.Create, "ns", "n", gvr("apps", "v1", "deployments"), "", schema.GroupVersionKind{})
		r := match.NewRequest(context.Background(), match.Env{}, a)
		if got, want := ix.Candidates(&r, nil), []int32{1, 2, 5, 6}; !slices.Equal(got, want) {
			t.Errorf("Candidates = %v, want %v", got, want)
		}
	})
	t.Run("empty index", func(t *testing.T) {
		r := match.NewRequest(context.Background(), env, attrs(admission.Create, "", "n", gvr("", "v1", "nodes"), "", schema.GroupVersionKind{}))
		if got := match.NewIndex(nil).Candidates(&r, nil); len(got) != 0 {
			t.Errorf("Candidates = %v, want none", got)
		}
	})
}

func TestExemptions(t *testing.T) {
	tests := []struct {
		res             schema.GroupVersionResource
		kind            schema.GroupVersionKind
		webhook, policy match.Exemption
	}{
		{gvr("", "v1", "pods"), gvk("", "v1", "Pod"), match.NotExempt, match.NotExempt},
		{gvr("authorization.k8s.io", "v1", "subjectaccessreviews"), gvk("authorization.k8s.io", "v1", "SubjectAccessReview"), match.ExemptFromAllHooks, match.ExemptFromAllHooks},
		{gvr("authentication.k8s.io", "v1", "tokenreviews"), gvk("authentication.k8s.io", "v1", "TokenReview"), match.ExemptFromAllHooks, match.ExemptFromAllHooks},
		{gvr("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"), gvk("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration"), match.ExemptFromAPIHooks, match.NotExempt},
		{gvr("admissionregistration.k8s.io", "v1beta1", "mutatingwebhookconfigurations"), gvk("admissionregistration.k8s.io", "v1beta1", "MutatingWebhookConfiguration"), match.ExemptFromAPIHooks, match.NotExempt},
		{gvr("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies"), gvk("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy"), match.ExemptFromAPIHooks, match.ExemptFromAPIHooks},
		{gvr("admissionregistration.k8s.io", "v1", "mutatingadmissionpolicybindings"), gvk("admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicyBinding"), match.ExemptFromAPIHooks, match.ExemptFromAPIHooks},
		{gvr("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies"), gvk("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy"), match.ExemptFromAPIHooks, match.ExemptFromAPIHooks},
		{gvr("admissionregistration.k8s.io", "v1", "widgets"), gvk("admissionregistration.k8s.io", "v1", "Widget"), match.NotExempt, match.NotExempt},
	}
	for _, tt := range tests {
		a := attrs(admission.Create, "", "n", tt.res, "", tt.kind)
		if got := match.WebhookExemption(a, true); got != tt.webhook {
			t.Errorf("WebhookExemption(%v) = %v, want %v", tt.res, got, tt.webhook)
		}
		if got := match.PolicyExemption(a); got != tt.policy {
			t.Errorf("PolicyExemption(%v) = %v, want %v", tt.res, got, tt.policy)
		}
	}
	review := attrs(admission.Create, "", "n", gvr("authorization.k8s.io", "v1", "selfsubjectrulesreviews"), "", gvk("authorization.k8s.io", "v1", "SelfSubjectRulesReview"))
	if got := match.WebhookExemption(review, false); got != match.NotExempt {
		t.Errorf("WebhookExemption(review, gate off) = %v, want NotExempt", got)
	}
	// The webhook check is by kind: a policy's status subresource is exempt.
	status := attrs(admission.Update, "", "p", gvr("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies"), "status", gvk("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy"))
	if got := match.WebhookExemption(status, true); got != match.ExemptFromAPIHooks {
		t.Errorf("WebhookExemption(policy status) = %v, want ExemptFromAPIHooks", got)
	}
	if n := len(match.VirtualResources()); n != 6 {
		t.Errorf("VirtualResources() has %d entries, want 6", n)
	}
}
