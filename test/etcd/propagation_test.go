package etcd_test

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// denyingWebhook is a validating webhook that denies every request.
func denyingWebhook(t *testing.T) *httptest.Server {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: false,
			Result: &metav1.Status{Message: "denied by the test webhook"}}
		review.Request = nil
		_ = json.NewEncoder(w).Encode(review)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// apply writes manifest to a file and applies it with kubectl on in.
func apply(t *testing.T, in *instance, manifest string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	in.kubectl(t, "apply", "-f", path)
}

const webhookManifest = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: deny-guarded}
webhooks:
- name: deny.example.com
  clientConfig: {url: %q, caBundle: %s}
  rules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: guarded}}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: ["v1"]
  timeoutSeconds: 5
`

// checkWebhookPropagation creates a denying ValidatingWebhookConfiguration
// with kubectl on a, then deletes it, five times: on a it takes effect
// before kubectl returns; the time until b denies (and allows again) is
// logged.
func checkWebhookPropagation(t *testing.T, a, b *instance) {
	srv := denyingWebhook(t)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	manifest := fmt.Sprintf(webhookManifest, srv.URL+"/validate", base64.StdEncoding.EncodeToString(ca))
	denied := deniedWith("denied by the test webhook")
	var toDeny, toAllow []time.Duration
	for range 5 {
		apply(t, a, manifest)
		deniedAtOnce(t, a, "guarded", denied)
		toDeny = append(toDeny, firstResult(t, b, "guarded", denied))
		if err := a.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(t.Context(), "deny-guarded", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		toAllow = append(toAllow, firstResult(t, b, "guarded", allowed))
	}
	t.Logf("webhook configuration written through A denies on B after %s (median %s); its delete, after %s",
		roundAll(toDeny), median(toDeny), roundAll(toAllow))
}

const policyManifest = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: deny-policed}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"]}]
  validations: [{expression: "false", message: "denied by the test policy"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: deny-policed}
spec:
  policyName: deny-policed
  validationActions: [Deny]
  matchResources: {namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: policed}}}
`

// checkPolicyPropagation creates a denying ValidatingAdmissionPolicy and
// its binding with kubectl on a; b denies shortly after.
func checkPolicyPropagation(t *testing.T, a, b *instance) {
	apply(t, a, policyManifest)
	denied := deniedWith("denied by the test policy")
	deniedAtOnce(t, a, "policed", denied)
	t.Logf("policy and binding written through A deny on B after %s", firstResult(t, b, "policed", denied).Round(time.Microsecond))
}

const definitionManifest = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// checkDefinitionPropagation creates a CustomResourceDefinition with
// kubectl on a; b serves its resource shortly after (it used to after a
// restart only), and kubectl on b finds it through discovery.
func checkDefinitionPropagation(t *testing.T, a, b *instance) {
	apply(t, a, definitionManifest)
	client := dynamic.NewForConfigOrDie(b.config)
	widgets := client.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("default")
	start := time.Now()
	for i := 0; ; i++ {
		w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w%d", i)}, "spec": map[string]any{"size": int64(i)}}}
		_, err := widgets.Create(t.Context(), w, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("B does not serve widgets 10s after the definition was created through A: %v", err)
		}
	}
	t.Logf("definition created through A served by B after %s", time.Since(start).Round(time.Microsecond))
	if out := b.kubectl(t, "get", "widgets", "-n", "default", "-o", "name"); len(out) == 0 {
		t.Errorf("kubectl get widgets on B: no output")
	}
}

// deniedAtOnce checks that a create through the instance that stored the
// configuration is denied at the first attempt: the configuration took
// effect there before the write returned.
func deniedAtOnce(t *testing.T, in *instance, ns string, denied func(error) bool) {
	t.Helper()
	_, err := in.client.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"}}, metav1.CreateOptions{})
	if !denied(err) {
		t.Errorf("create in %s through %s right after the configuration was written there: %v, want denied", ns, in.name, err)
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Microsecond)
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Microsecond)
	}
	return out
}
