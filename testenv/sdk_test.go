package testenv_test

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/webhook"
	"github.com/admitd/admitd/testenv"
)

// TestSDKWebhookWithPolicy runs two webhooks written with the SDK and a
// ValidatingAdmissionPolicy behind the real dispatcher: the mutating
// webhook labels ConfigMaps, the validating webhook and the policy each
// deny what they are written to deny.
func TestSDKWebhookWithPolicy(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	labeler := env.ServeWebhook(t, webhook.Serve(webhook.HandlerFunc(func(_ context.Context, r webhook.Request) webhook.Response {
		var cm corev1.ConfigMap
		if err := r.DecodeObject(&cm); err != nil {
			return webhook.Errored(400, err)
		}
		labeled := cm.DeepCopy()
		if labeled.Labels == nil {
			labeled.Labels = map[string]string{}
		}
		labeled.Labels["team"] = "platform"
		return webhook.Patched(&cm, labeled)
	})))
	guard := env.ServeWebhook(t, webhook.Serve(webhook.HandlerFunc(func(_ context.Context, r webhook.Request) webhook.Response {
		var cm corev1.ConfigMap
		if err := r.DecodeObject(&cm); err != nil {
			return webhook.Errored(400, err)
		}
		if _, bad := cm.Data["password"]; bad {
			return webhook.Denied("no passwords in ConfigMaps")
		}
		return webhook.Allowed("")
	})))
	rule := testenv.Rule("configmaps", admissionregistrationv1.Create)
	env.RegisterMutating(t, "labeler.example.com", labeler, rule)
	env.RegisterValidating(t, "guard.example.com", guard, rule)
	createPolicy(t, env)

	cms := env.Client().CoreV1().ConfigMaps("default")
	got, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ok"}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{})
	if err != nil || got.Labels["team"] != "platform" {
		t.Fatalf("create ok = %v, labels %v; want admitted with the team label", err, got.Labels)
	}
	for name, tc := range map[string]struct {
		data map[string]string
		want string
	}{
		"password": {map[string]string{"password": "x"}, `admission webhook "guard.example.com" denied the request: no passwords in ConfigMaps`},
		"huge":     {map[string]string{"a": strings.Repeat("x", 20)}, `ValidatingAdmissionPolicy 'short-values' with binding 'short-values' denied request: values must be short`},
	} {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: tc.data}, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("create %s = %v, want %q", name, err, tc.want)
		}
	}
}

func createPolicy(t *testing.T, env *testenv.Env) {
	t.Helper()
	ctx := context.Background()
	api := env.Client().AdmissionregistrationV1()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "short-values"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: testenv.Rule("configmaps", admissionregistrationv1.Create),
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!has(object.data) || object.data.all(k, size(object.data[k]) < 10)",
				Message:    "values must be short",
			}},
		},
	}
	if _, err := api.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "short-values"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "short-values",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
