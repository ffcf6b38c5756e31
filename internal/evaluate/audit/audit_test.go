package audit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/internal/evaluate"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

func TestMain(m *testing.M) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}

func objects(t *testing.T, docs string) []evaluate.Object {
	t.Helper()
	var out []evaluate.Object
	for i, doc := range strings.Split(docs, "\n---\n") {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, evaluate.Object{Unstructured: &unstructured.Unstructured{Object: m}, Source: "doc" + string(rune('1'+i))})
	}
	return out
}

const policies = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: require-team}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: every ConfigMap needs a team label
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: prod}
spec:
  policyName: require-team
  validationActions: [Deny]
  matchResources: {namespaceSelector: {matchLabels: {env: prod}}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: dev}
spec:
  policyName: require-team
  validationActions: [Warn, Audit]
  matchResources: {namespaceSelector: {matchLabels: {env: dev}}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: owner}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  matchConditions:
  - {name: no-owner, expression: "!has(object.metadata.labels) || !('owner' in object.metadata.labels)"}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "Object{metadata: Object.metadata{labels: {'owner': 'platform'}}}"
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: owner}
spec:
  policyName: owner`

const existing = `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: prod, labels: {env: prod}, uid: u-prod, resourceVersion: "5"}}
- {apiVersion: v1, kind: Namespace, metadata: {name: dev, labels: {env: dev}}}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: good, namespace: prod, labels: {team: a, owner: b}, resourceVersion: "77", uid: u-good}
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: orphan
    namespace: prod
    ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: gone, uid: u-gone}]
- {apiVersion: v1, kind: ConfigMap, metadata: {name: loose, namespace: dev}}
- {apiVersion: v1, kind: Secret, metadata: {name: s, namespace: elsewhere, labels: {bad: "true"}}}
- {apiVersion: v1, kind: Secret, metadata: {name: t, namespace: elsewhere, labels: {stamp: "true"}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: teamed, namespace: dev, labels: {team: q}}`

// secretHook is a real HTTPS webhook: it denies Secrets labelled bad and
// stamps those labelled stamp, and records what it was sent.
type secretHook struct {
	mu      sync.Mutex
	ops     []string
	changed []string // objects whose oldObject differed from object
}

func (h *secretHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review struct {
		Request struct {
			UID       string                     `json:"uid"`
			Operation string                     `json:"operation"`
			Object    *unstructured.Unstructured `json:"object"`
			OldObject *unstructured.Unstructured `json:"oldObject"`
		} `json:"request"`
	}
	_ = json.NewDecoder(r.Body).Decode(&review)
	q := review.Request
	h.mu.Lock()
	h.ops = append(h.ops, q.Operation)
	if q.Operation == "UPDATE" && (q.OldObject == nil || !reflect.DeepEqual(q.OldObject.Object["metadata"], q.Object.Object["metadata"])) {
		h.changed = append(h.changed, q.Object.GetName())
	}
	h.mu.Unlock()
	resp := map[string]any{"uid": q.UID, "allowed": true}
	switch labels := q.Object.GetLabels(); {
	case labels["bad"] == "true":
		resp = map[string]any{"uid": q.UID, "allowed": false, "status": map[string]any{"code": 403, "message": "bad secret"}}
	case labels["stamp"] == "true":
		patch := `[{"op":"add","path":"/metadata/annotations","value":{"stamped":"yes"}}]`
		resp["patchType"], resp["patch"] = "JSONPatch", base64.StdEncoding.EncodeToString([]byte(patch))
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
}

func webhookConfig(hook *webhooktest.Server) string {
	cfg := hook.ClientConfig("/secrets")
	return `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: secrets}
webhooks:
- name: secrets.example.com
  clientConfig: {url: "` + *cfg.URL + `", caBundle: "` + base64.StdEncoding.EncodeToString(cfg.CABundle) + `"}
  rules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [secrets]}]
  sideEffects: None
  admissionReviewVersions: [v1]`
}

func runAudit(t *testing.T, asCreate bool) (*Report, *secretHook) {
	t.Helper()
	h := &secretHook{}
	hook := webhooktest.Start(t, h)
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/objects.yaml", []byte(existing), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := LoadFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), src, Options{Config: objects(t, policies+"\n---\n"+webhookConfig(hook)), AsCreate: asCreate})
	if err != nil {
		t.Fatal(err)
	}
	return r, h
}

// names are the objects of findings, as namespace/name.
func names(fs []Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Object.Namespace+"/"+f.Object.Name)
	}
	slices.Sort(out)
	return out
}

func find(t *testing.T, r *Report, plugin, name, config string) *Policy {
	t.Helper()
	for _, p := range r.Policies {
		if p.Plugin == plugin && p.Name == name && p.Configuration == config {
			return p
		}
	}
	t.Fatalf("report has no %s %s/%s; it has %+v", plugin, name, config, r.Policies)
	return nil
}

func TestAuditReportsWhatEachPolicyAndWebhookWouldDo(t *testing.T) {
	r, h := runAudit(t, false)
	if len(r.NotEvaluated) != 0 {
		t.Errorf("NotEvaluated = %+v, want none (the orphan's owner is absent and it is audited anyway)", r.NotEvaluated)
	}
	if r.Objects != 8 || r.Operation != "UPDATE" {
		t.Errorf("Objects, Operation = %d, %s; want 8 (2 namespaces, 6 others), UPDATE", r.Objects, r.Operation)
	}
	for _, tc := range []struct {
		plugin, name, config string
		matched              int
		denied, warned       []string
		annotated, mutated   []string
	}{
		{"ValidatingAdmissionPolicy", "require-team", "prod", 2, []string{"prod/orphan"}, []string{}, []string{}, []string{}},
		{"ValidatingAdmissionPolicy", "require-team", "dev", 2, []string{}, []string{"dev/loose"}, []string{"dev/loose"}, []string{}},
		{"MutatingAdmissionPolicy", "owner", "owner", 3, []string{}, []string{}, []string{}, []string{"dev/loose", "dev/teamed", "prod/orphan"}},
		{"MutatingAdmissionWebhook", "secrets.example.com", "secrets", 2, []string{"elsewhere/s"}, []string{}, []string{}, []string{"elsewhere/t"}},
	} {
		p := find(t, r, tc.plugin, tc.name, tc.config)
		if p.Matched != tc.matched {
			t.Errorf("%s: matched %d, want %d", p.title(), p.Matched, tc.matched)
		}
		for _, c := range []struct {
			what      string
			got, want []string
		}{{"denied", names(p.Denied), tc.denied}, {"warned", names(p.Warned), tc.warned},
			{"annotated", names(p.Annotated), tc.annotated}, {"mutated", names(p.Mutated), tc.mutated}} {
			if !slices.Equal(c.got, c.want) {
				t.Errorf("%s: %s %v, want %v", p.title(), c.what, c.got, c.want)
			}
		}
	}
	if d := find(t, r, "ValidatingAdmissionPolicy", "require-team", "prod").Denied; len(d) == 1 && d[0].Message != "every ConfigMap needs a team label" {
		t.Errorf("denial message = %q", d[0].Message)
	}
	for _, f := range find(t, r, "MutatingAdmissionPolicy", "owner", "owner").Mutated {
		if f.Object.Name == "loose" && compactJSON(f.Patch) != `[{"op":"add","path":"/metadata/labels","value":{"owner":"platform"}}]` {
			t.Errorf("patch of dev/loose = %s", f.Patch)
		}
	}
	// a Secret's values are redacted, as in every trace
	if m := find(t, r, "MutatingAdmissionWebhook", "secrets.example.com", "secrets").Mutated; len(m) == 1 &&
		compactJSON(m[0].Patch) != `[{"op":"add","path":"/metadata/annotations","value":"REDACTED"}]` {
		t.Errorf("patch of the Secret = %s", m[0].Patch)
	}
	if !slices.Equal(h.ops, []string{"UPDATE", "UPDATE"}) || len(h.changed) != 0 {
		t.Errorf("webhook saw %v, old objects unlike the new for %v; want two UPDATEs re-applying the objects unchanged", h.ops, h.changed)
	}
	if !r.Fails(SeverityDeny) || r.Fails(SeverityNone) {
		t.Errorf("Fails(deny), Fails(none) = %v, %v; want true, false", r.Fails(SeverityDeny), r.Fails(SeverityNone))
	}
}

func TestAuditAsCreate(t *testing.T) {
	r, h := runAudit(t, true)
	if r.Operation != "CREATE" || !slices.Equal(h.ops, []string{"CREATE", "CREATE"}) {
		t.Errorf("operation %s, webhook saw %v; want CREATEs", r.Operation, h.ops)
	}
	if got := names(find(t, r, "MutatingAdmissionWebhook", "secrets.example.com", "secrets").Denied); !slices.Equal(got, []string{"elsewhere/s"}) {
		t.Errorf("denied %v, want [elsewhere/s]", got)
	}
}

// TestAuditAnswersWebhooksFromRecordedResponses: a webhook behind a Service
// answered by one recorded response for every call; an object the server
// has already (the default ServiceAccount) is audited as any other, and
// again when a second copy comes.
func TestAuditAnswersWebhooksFromRecordedResponses(t *testing.T) {
	responses, err := evaluate.ParseResponses([]byte(`apiVersion: eval.admitd.io/v1alpha1
kind: WebhookResponses
webhooks:
  sa/sa.example.com:
    allowed: true
    warnings: [service accounts are watched]
`))
	if err != nil {
		t.Fatal(err)
	}
	config := objects(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: sa}
webhooks:
- name: sa.example.com
  clientConfig: {service: {name: sa, namespace: platform}}
  rules: [{operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: [serviceaccounts]}]
  sideEffects: None
  admissionReviewVersions: [v1]`)
	src := &Files{Objects: objects(t, `apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: default}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: builder, namespace: default}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: default}`)}
	r, err := Run(context.Background(), src, Options{Config: config, Responses: responses})
	if err != nil {
		t.Fatal(err)
	}
	p := find(t, r, "ValidatingAdmissionWebhook", "sa.example.com", "sa")
	if got := names(p.Warned); !slices.Equal(got, []string{"default/builder", "default/default", "default/default"}) || p.Matched != 3 {
		t.Errorf("warned %v (matched %d), want builder and default twice", got, p.Matched)
	}
	if len(r.NotEvaluated) != 0 {
		t.Errorf("not evaluated: %+v", r.NotEvaluated)
	}
}
