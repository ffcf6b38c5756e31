package testenv

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"sync/atomic"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// review adapts a function of an AdmissionRequest to an http.Handler that
// speaks AdmissionReview v1 (the SDK in pkg/webhook does this properly).
func review(decide func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rv admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&rv); err != nil || rv.Request == nil {
			http.Error(w, "want an AdmissionReview", http.StatusBadRequest)
			return
		}
		resp := decide(rv.Request)
		resp.UID = rv.Request.UID
		rv.Request, rv.Response = nil, resp
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&rv)
	})
}

func configMapOf(t *testing.T, req *admissionv1.AdmissionRequest) *corev1.ConfigMap {
	var cm corev1.ConfigMap
	if err := json.Unmarshal(req.Object.Raw, &cm); err != nil {
		t.Errorf("decoding the ConfigMap sent to the webhook: %v", err)
	}
	return &cm
}

// denyForbidden denies ConfigMaps that have a key "forbidden".
func denyForbidden(t *testing.T, calls *atomic.Int32) http.Handler {
	return review(func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		calls.Add(1)
		if _, bad := configMapOf(t, req).Data["forbidden"]; bad {
			return &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "key forbidden is not allowed", Code: http.StatusForbidden}}
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
}

// addLabel labels every ConfigMap mutated=yes.
func addLabel(t *testing.T) http.Handler {
	return review(func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		patch := `[{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}]`
		if configMapOf(t, req).Labels != nil {
			patch = `[{"op":"add","path":"/metadata/labels/mutated","value":"yes"}]`
		}
		pt := admissionv1.PatchTypeJSONPatch
		return &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: &pt}
	})
}

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
}

func TestValidatingWebhookDeniesAConfigMap(t *testing.T) {
	env := Start(t)
	var calls atomic.Int32
	hook := env.ServeWebhook(t, denyForbidden(t, &calls))
	env.RegisterValidating(t, "deny.testenv.example.com", hook, Rule("configmaps", admissionregistrationv1.Create))
	cms := env.Client().CoreV1().ConfigMaps("default")
	ctx := context.Background()

	if _, err := cms.Create(ctx, configMap("fine", map[string]string{"a": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating an allowed ConfigMap: %v", err)
	}
	_, err := cms.Create(ctx, configMap("bad", map[string]string{"forbidden": "1"}), metav1.CreateOptions{})
	want := `admission webhook "deny.testenv.example.com" denied the request: key forbidden is not allowed`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("creating a forbidden ConfigMap: err = %v, want a 403 %q", err, want)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("webhook called %d times, want 2", got)
	}
	// Outside the rules: no call.
	if _, err := env.Client().CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("webhook called %d times after a Secret was created, want still 2", got)
	}
}

func TestMutatingAndValidatingWebhooksTogether(t *testing.T) {
	env := Start(t)
	var calls atomic.Int32
	env.RegisterMutating(t, "label.testenv.example.com", env.ServeWebhook(t, addLabel(t)), Rule("configmaps"))
	env.RegisterValidating(t, "deny.testenv.example.com", env.ServeWebhook(t, denyForbidden(t, &calls)), Rule("configmaps"))
	cms := env.Client().CoreV1().ConfigMaps("default")
	ctx := context.Background()

	got, err := cms.Create(ctx, configMap("cm", map[string]string{"a": "1"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a ConfigMap: %v", err)
	}
	if got.Labels["mutated"] != "yes" {
		t.Errorf("created ConfigMap labels = %v, want mutated=yes from the mutating webhook", got.Labels)
	}
	got.Data["forbidden"] = "1"
	if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("update adding a forbidden key: err = %v, want the validating webhook's denial", err)
	}
}

// Registrations made by a test end with it, so tests can share one
// environment.
func TestRegistrationsEndWithTheTest(t *testing.T) {
	env := Start(t)
	var calls atomic.Int32
	t.Run("registers", func(t *testing.T) {
		env.RegisterValidating(t, "deny.testenv.example.com", env.ServeWebhook(t, denyForbidden(t, &calls)))
	})
	list, err := env.Client().AdmissionregistrationV1().ValidatingWebhookConfigurations().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d webhook configurations left after the test that registered them, want 0", len(list.Items))
	}
	if _, err := env.Client().CoreV1().ConfigMaps("default").Create(context.Background(), configMap("bad", map[string]string{"forbidden": "1"}), metav1.CreateOptions{}); err != nil {
		t.Errorf("create after the webhook was unregistered: %v", err)
	}
}

func TestCloseLeavesNothingBehind(t *testing.T) {
	env, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(env.dataDir); err != nil {
		t.Fatalf("data directory of a running environment: %v", err)
	}
	if err := env.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}
	if _, err := os.Stat(env.dataDir); !os.IsNotExist(err) {
		t.Errorf("data directory after Close: %v, want it removed", err)
	}
}

func TestWithoutAdmissionPlugins(t *testing.T) {
	ctx := context.Background()
	_, err := Start(t).Client().CoreV1().ConfigMaps("nowhere").Create(ctx, configMap("cm", nil), metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("create in a missing namespace: err = %v, want NamespaceLifecycle's NotFound", err)
	}
	env := Start(t, WithoutAdmissionPlugins("NamespaceLifecycle"))
	if _, err := env.Client().CoreV1().ConfigMaps("nowhere").Create(ctx, configMap("cm", nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("create in a missing namespace without NamespaceLifecycle: %v", err)
	}
}

func TestRule(t *testing.T) {
	all := []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
	create := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	for _, tc := range []struct {
		resource string
		ops      []admissionregistrationv1.OperationType
		group    string
		res      string
		wantOps  []admissionregistrationv1.OperationType
	}{
		{"configmaps", nil, "", "configmaps", all},
		{"configmaps", create, "", "configmaps", create},
		{"deployments.apps", nil, "apps", "deployments", all},
		{"pods/exec", nil, "", "pods/exec", all},
		{"deployments.apps/scale", nil, "apps", "deployments/scale", all},
		{"widgets.example.com", nil, "example.com", "widgets", all},
		{"*", nil, "*", "*", all},
		{"*/status", nil, "*", "*/status", all},
	} {
		got := Rule(tc.resource, tc.ops...)
		want := admissionregistrationv1.RuleWithOperations{Operations: tc.wantOps, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{tc.group}, APIVersions: []string{"*"}, Resources: []string{tc.res}}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Rule(%q, %v) = %+v, want %+v", tc.resource, tc.ops, got, want)
		}
	}
}

// The environment authorizes with RBAC: the administrator may do anything,
// an impersonated user without bindings nothing; with AlwaysAllow everyone
// may do everything.
func TestAuthorizationModes(t *testing.T) {
	for _, tc := range []struct {
		opts      []Option
		forbidden bool
	}{
		{nil, true},
		{[]Option{WithAuthorizationModes("AlwaysAllow")}, false},
	} {
		env := Start(t, tc.opts...)
		if _, err := env.Client().CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{}); err != nil {
			t.Fatalf("administrator listing configmaps: %v", err)
		}
		cfg := rest.CopyConfig(env.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
		_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
		if apierrors.IsForbidden(err) != tc.forbidden {
			t.Errorf("options %d: nobody listing configmaps: %v, want forbidden %v", len(tc.opts), err, tc.forbidden)
		}
	}
}
