package match_test

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		0:  hook(nil, "", "pods"),
		1:  hook(nil, "*", "*/*"),
		2:  hook(eq, "apps", "deployments"),
		3:  hook(eq, "extensions", "deployments/scale"),
		4:  hook(exact, "extensions", "deployments"),
		5:  match.Policy(nil), // configuration error: always visited
		6:  match.Binding(nil),
		7:  hook(nil, "*", "pods/*"),
		8:  hook(nil, "", "*"),
		9:  match.Webhook(nil, nil, everything, everything),
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

func TestIndexNamespaceFilter(t *testing.T) {
	rules := []v1.RuleWithOperations{rule(all(), all(), all(), []string{"*/*"}, "")}
	env := func(lookup *fakeNamespaces) match.Env { return match.Env{Namespaces: lookup} }
	byEnv := func(v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"env": v}}
	}
	cs := []*match.Criteria{
		0: match.Webhook(rules, nil, byEnv("prod"), everything),
		1: match.Webhook(rules, nil, byEnv("dev"), everything),
		2: match.Webhook(rules, nil, everything, everything),
		3: match.Webhook(rules, nil, nil, everything),
		4: match.Webhook(rules, nil, sel("env", metav1.LabelSelectorOpIn, "bad value"), everything),
		5: match.Webhook(rules, nil, byEnv("dev"), everything),
		6: match.Webhook(rules, nil, byEnv("prod"), everything),
	}
	ix := match.NewIndex(cs)
	nsRes := gvr("", "v1", "namespaces")
	tests := []struct {
		name string
		a    *admission.Attributes
		want []int32
	}{
		{"namespace prod", attrs(admission.Create, "prod", "p", gvr("", "v1", "pods"), "", gvk("", "v1", "Pod")), []int32{0, 2, 3, 4, 6}},
		{"namespace dev", attrs(admission.Create, "dev", "p", gvr("", "v1", "pods"), "", gvk("", "v1", "Pod")), []int32{1, 2, 3, 4, 5}},
		{"missing namespace: no filter", attrs(admission.Create, "missing", "p", gvr("", "v1", "pods"), "", gvk("", "v1", "Pod")), []int32{0, 1, 2, 3, 4, 5, 6}},
		{"cluster-scoped: no filter", attrs(admission.Create, "", "n", gvr("", "v1", "nodes"), "", gvk("", "v1", "Node")), []int32{0, 1, 2, 3, 4, 5, 6}},
		{"namespace UPDATE: no filter", attrs(admission.Update, "prod", "prod", nsRes, "", gvk("", "v1", "Namespace")), []int32{0, 1, 2, 3, 4, 5, 6}},
		{"namespace DELETE: stored labels", attrs(admission.Delete, "prod", "prod", nsRes, "", gvk("", "v1", "Namespace")), []int32{0, 2, 3, 4, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := newNamespaces(namespaceObj("prod", map[string]string{"env": "prod"}), namespaceObj("dev", map[string]string{"env": "dev"}))
			r := match.NewRequest(context.Background(), env(lookup), tt.a)
			if got := ix.Candidates(&r, nil); !slices.Equal(got, tt.want) {
				t.Errorf("Candidates = %v, want %v", got, tt.want)
			}
			for i := range cs {
				cs[i].Match(&r)
			}
			if n := lookup.calls.Load(); n > 1 {
				t.Errorf("namespace read %d times, want at most 1", n)
			}
			checkIndex(t, ix, cs, env(lookup), tt.a)
		})
	}
}
