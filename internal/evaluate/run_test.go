package evaluate

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

func objects(t testing.TB, docs string) []Object { return objectsOf(t, docs) }

func objectsOf(t testing.TB, docs string) []Object {
	t.Helper()
	var out []Object
	for i, doc := range strings.Split(docs, "\n---\n") {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, Object{Unstructured: &unstructured.Unstructured{Object: m}, Source: "doc" + string(rune('1'+i))})
	}
	return out
}

const serviceHook = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: labels}
webhooks:
- name: label.example.com
  clientConfig: {service: {name: labeller, namespace: platform}}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  sideEffects: None
  admissionReviewVersions: [v1]`

func configMap(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default"}, "data": map[string]any{"k": "v"}}}
}

func TestRunAnswersWebhooksFromRecordedResponses(t *testing.T) {
	responses, err := ParseResponses([]byte(`apiVersion: eval.admitd.io/v1alpha1
kind: WebhookResponses
webhooks:
  labels/label.example.com:
    allowed: true
    patch: [{op: add, path: /metadata/labels, value: {seen: "yes"}}]
    warnings: [labelled]
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), Input{Objects: objects(t, serviceHook), Request: Request{Object: configMap("c")}, Responses: responses})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Allowed || r.Decision != "Allowed" {
		t.Fatalf("Run = %s, %+v; want Allowed", r.Decision, r.Status)
	}
	labels, _, _ := unstructured.NestedStringMap(r.Object, "metadata", "labels")
	if labels["seen"] != "yes" {
		t.Errorf("final labels = %v, want seen=yes from the recorded patch", labels)
	}
	if len(r.Warnings) != 1 || r.Warnings[0] != "labelled" {
		t.Errorf("warnings = %q, want [labelled]", r.Warnings)
	}
	if r.Trace == nil || len(r.Trace.Steps) == 0 {
		t.Fatal("no trace")
	}
	var out bytes.Buffer
	if err := Write(&out, r, "tree"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"decision: Allowed", `+ metadata.labels: {"seen":"yes"}`, "label.example.com (labels): mutated"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("tree output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunRefusesUnreachableAndUnknownWebhooks(t *testing.T) {
	ctx := context.Background()
	_, err := Run(ctx, Input{Objects: objects(t, serviceHook), Request: Request{Object: configMap("c")}})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "calls Service platform/labeller") {
		t.Errorf("Run(service webhook without responses) = %v, want a ConfigError naming the Service", err)
	}
	responses := Responses{"labels/misspelt.example.com": {Calls: []Response{{Allowed: true}}, Every: true}}
	_, err = Run(ctx, Input{Objects: objects(t, serviceHook), Request: Request{Object: configMap("c")}, Responses: responses})
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "misspelt.example.com") {
		t.Errorf("Run(responses for no webhook) = %v, want a ConfigError naming it", err)
	}
}

func TestRunCallsURLWebhooksAndReportsDenials(t *testing.T) {
	var calls atomic.Int32
	hook := webhooktest.Start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var review map[string]any
		_ = json.NewDecoder(r.Body).Decode(&review)
		req := review["request"].(map[string]any)
		user := req["userInfo"].(map[string]any)["username"]
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
			"response": map[string]any{"uid": req["uid"], "allowed": false, "status": map[string]any{"code": 403, "message": "not for " + user.(string)}}})
	}))
	cfg := hook.ClientConfig("/deny")
	config := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: deny}
webhooks:
- name: deny.example.com
  clientConfig: {url: "` + *cfg.URL + `", caBundle: "` + b64(cfg.CABundle) + `"}
  rules: [{operations: [DELETE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  sideEffects: None
  admissionReviewVersions: [v1]`
	objs := append(objects(t, config), Object{Unstructured: configMap("old"), Source: "old"})
	r, err := Run(context.Background(), Input{Objects: objs,
		Request: Request{Operation: "delete", Object: configMap("old"), User: User{Name: "alice", Groups: []string{"dev"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Allowed || r.Decision != "Denied" || r.Status == nil || r.Status.Code != 403 {
		t.Fatalf("Run = %s %+v, want Denied with 403", r.Decision, r.Status)
	}
	if want := `admission webhook "deny.example.com" denied the request: not for alice`; r.Status.Message != want {
		t.Errorf("message = %q, want %q", r.Status.Message, want)
	}
	if calls.Load() != 1 || r.Object != nil {
		t.Errorf("calls = %d, object = %v; want one call and no object for a DELETE", calls.Load(), r.Object)
	}
}

func TestRunUpdateNeedsTheStoredObject(t *testing.T) {
	_, err := Run(context.Background(), Input{Request: Request{Operation: Update, Object: configMap("nowhere")}})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "reading the stored object") {
		t.Errorf("Run(UPDATE of nothing) = %v, want a ConfigError", err)
	}
	if _, err := Run(context.Background(), Input{Request: Request{Operation: "PATCH", Object: configMap("x")}}); !errors.As(err, &ce) {
		t.Errorf("Run(PATCH) = %v, want a ConfigError", err)
	}
}

func TestObjectDiff(t *testing.T) {
	before := map[string]any{"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "1"}}, "spec": map[string]any{"list": []any{"a"}}}
	after := map[string]any{"metadata": map[string]any{"name": "a", "uid": "u", "labels": map[string]any{"x": "2", "a.b/c": "d"}},
		"spec": map[string]any{"list": []any{"a", "b"}}, "status": map[string]any{}}
	got := strings.Join(ObjectDiff(before, after), "\n")
	want := strings.Join([]string{`+ metadata.labels[a.b/c]: "d"`, `+ spec.list[1]: "b"`, `+ status: {}`, `~ metadata.labels.x: "1" -> "2"`}, "\n")
	if got != want {
		t.Errorf("ObjectDiff =\n%s\nwant\n%s", got, want)
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestRunUpdateOfAReviewFromACluster(t *testing.T) {
	review := map[string]any{"request": map[string]any{
		"operation": "UPDATE", "namespace": "default", "userInfo": map[string]any{"username": "bob"},
		"object": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "new"},
			"metadata": map[string]any{"name": "c", "namespace": "default", "resourceVersion": "4711", "uid": "u-1"}},
		"oldObject": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "old"},
			"metadata": map[string]any{"name": "c", "namespace": "default", "resourceVersion": "4711", "uid": "u-1",
				"creationTimestamp": "2026-01-01T00:00:00Z"}},
	}}
	q, err := FromReview(review)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), Input{Request: q})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Allowed || r.Object["data"].(map[string]any)["k"] != "new" {
		t.Errorf("Run(UPDATE with a stale resourceVersion) = %s %+v, want the update stored", r.Decision, r.Status)
	}
}

func TestTreeRedactsSecretValues(t *testing.T) {
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "s", "namespace": "default"}, "stringData": map[string]any{"password": "hunter2"}}}
	r, err := Run(context.Background(), Input{Request: Request{Object: secret}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, r, "tree"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "hunter2") || strings.Contains(out.String(), "aHVudGVyMg==") || !strings.Contains(out.String(), "+ data: REDACTED") {
		t.Errorf("the tree of a Secret shows its values:\n%s", out.String())
	}
}

// With CallUnreachableWebhooks a webhook behind a Service eval cannot reach
// is called as the server would call it: the call fails, and its
// failurePolicy decides (Fail, the default: refused; Ignore: admitted).
func TestRunCallsUnreachableWebhooksWhenAsked(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		policy  string
		allowed bool
	}{{"Fail", false}, {"Ignore", true}} {
		hook := strings.Replace(serviceHook, "  sideEffects: None", "  sideEffects: None\n  timeoutSeconds: 2\n  failurePolicy: "+tc.policy, 1)
		r, err := Run(ctx, Input{Objects: objects(t, hook), Request: Request{Object: configMap("c")},
			Server: ServerConfig{CallUnreachableWebhooks: true}})
		if err != nil {
			t.Fatalf("failurePolicy %s: %v", tc.policy, err)
		}
		if r.Allowed != tc.allowed {
			t.Errorf("failurePolicy %s: allowed = %v, want %v (status %+v)", tc.policy, r.Allowed, tc.allowed, r.Status)
		}
		if !tc.allowed && (r.Status == nil || !strings.Contains(r.Status.Message, `failed calling webhook "label.example.com"`)) {
			t.Errorf("failurePolicy Fail: status %+v, want the failed call", r.Status)
		}
	}
}
