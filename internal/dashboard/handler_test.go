package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/trace"
	"github.com/admitd/admitd/pkg/lint"
)

const riskyConfig = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: risky}
webhooks:
- name: all.risky.example.com
  clientConfig: {url: "https://127.0.0.1:1/validate", caBundle: "Zm9v"}
  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: ["v1"]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas}
spec:
  matchConstraints:
    resourceRules: [{operations: ["CREATE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["deployments"]}]
  validations: [{expression: "object.spec.replicas <= 5"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas-binding}
spec:
  policyName: replicas
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: orphan}
spec:
  policyName: missing
  validationActions: [Deny]
`

func newTestDashboard(t *testing.T, ring *trace.Ring) (*Dashboard, *httptest.Server) {
	t.Helper()
	d := New(Options{Traces: ring, Configuration: func(context.Context) (*lint.Set, error) {
		s := &lint.Set{}
		return s, s.Decode(strings.NewReader(riskyConfig), "test")
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	srv := httptest.NewServer(d.Handler())
	t.Cleanup(func() { cancel(); <-done; srv.Close() })
	return d, srv
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func TestConfigViewShowsScopesAndFindings(t *testing.T) {
	_, srv := newTestDashboard(t, nil)
	resp, body := get(t, srv.URL+"/dashboard/api/config")
	var v ConfigView
	if err := json.Unmarshal([]byte(body), &v); resp.StatusCode != 200 || err != nil {
		t.Fatalf("GET config = %d %s (%v)", resp.StatusCode, body, err)
	}
	if len(v.WebhookConfigurations) != 1 || len(v.WebhookConfigurations[0].Webhooks) != 1 {
		t.Fatalf("webhook configurations %+v, want risky with one webhook", v.WebhookConfigurations)
	}
	w := v.WebhookConfigurations[0].Webhooks[0]
	if w.Name != "all.risky.example.com" || w.FailurePolicy != "Fail" || w.TimeoutSeconds != 10 || !w.CABundle ||
		w.Client != "https://127.0.0.1:1/validate" || len(w.Rules) != 1 || w.Rules[0].Resources[0] != "*" || w.NamespaceSelector != "" {
		t.Errorf("webhook %+v, want the risky webhook defaulted (timeout 10s) with its rule", w)
	}
	if !hasFinding(w.Findings, "AL006") || strings.Contains(body, "Zm9v") || strings.Contains(body, `"source"`) {
		t.Errorf("webhook findings %+v, want AL006 (Fail on *), and no caBundle or source in %s", w.Findings, body)
	}
	if len(v.Policies) != 1 || v.Policies[0].Name != "replicas" || len(v.Policies[0].Bindings) != 1 ||
		v.Policies[0].Expressions[0] != "object.spec.replicas <= 5" || v.Policies[0].Match.Rules[0].Resources[0] != "deployments" {
		t.Errorf("policies %+v, want replicas with its binding, rule and expression", v.Policies)
	}
	if len(v.BindingsWithoutPolicy) != 1 || v.BindingsWithoutPolicy[0].Name != "orphan" || len(v.BindingsWithoutPolicy[0].Findings) == 0 {
		t.Errorf("bindings without policy %+v, want orphan with a finding", v.BindingsWithoutPolicy)
	}
	if len(v.Findings) == 0 || v.Summary.Errors == 0 {
		t.Errorf("findings %+v summary %+v, want errors", v.Findings, v.Summary)
	}
}

func hasFinding(fs []lint.Finding, id string) bool {
	for _, f := range fs {
		if f.ID == id {
			return true
		}
	}
	return false
}

// traced records a finished create of a configmap that one webhook saw.
func traced(ring *trace.Ring, id, name string) (*trace.Entry, *admission.Record) {
	rec := admission.NewRecord()
	rec.AddStep(admission.Step{Plugin: "ValidatingAdmissionWebhook", Name: "check.example.com", Config: "check", Matched: true,
		Reason: "called", Duration: 3 * time.Millisecond, Detail: &admission.StepDetail{FailurePolicy: "Fail", ReviewVersion: "admission.k8s.io/v1"}})
	e := trace.Capture(trace.Request{AuditID: id, Time: time.Now(), User: "alice", Verb: "create", Resource: "configmaps", Namespace: "ns", Name: name},
		trace.Outcome{Code: 201, Duration: 5 * time.Millisecond}, rec)
	ring.Add(e)
	return e, rec
}

func TestDecisionsTracesAndStats(t *testing.T) {
	ring := trace.NewRing(10)
	d, srv := newTestDashboard(t, ring)
	e, rec := traced(ring, "id-1", "one")
	d.Observe(e, rec, 5*time.Millisecond)

	_, body := get(t, srv.URL+"/dashboard/api/decisions")
	var ds []Decision
	if err := json.Unmarshal([]byte(body), &ds); err != nil || len(ds) != 1 || ds[0].AuditID != "id-1" || ds[0].Name != "one" ||
		ds[0].Decision != trace.Allowed || ds[0].LatencyMillis != 5 {
		t.Errorf("decisions = %s (%v), want id-1 allowed in 5ms", body, err)
	}
	resp, body := get(t, srv.URL+"/dashboard/api/traces/id-1?output=tree")
	if resp.StatusCode != 200 || !strings.Contains(body, "check.example.com (check): admitted, 3ms") {
		t.Errorf("trace tree = %d %s, want the webhook step", resp.StatusCode, body)
	}
	if resp, _ := get(t, srv.URL+"/dashboard/api/traces/none"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown trace = %d, want 404", resp.StatusCode)
	}
	for start := time.Now(); d.Stats().Requests == 0; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("Run did not count the observed request")
		}
	}
	if c := d.Stats().Calls; len(c) != 1 || c[0].Name != "check.example.com" || c[0].Calls != 1 || c[0].P50 != 3 {
		t.Errorf("stats calls = %+v, want check.example.com once at 3ms", c)
	}
}

func TestObserveNeverBlocks(t *testing.T) {
	d := New(Options{QueueSize: 2, Configuration: func(context.Context) (*lint.Set, error) { return &lint.Set{}, nil }})
	ring := trace.NewRing(1)
	e, rec := traced(ring, "id", "x")
	for range 5 {
		d.Observe(e, rec, time.Millisecond) // Run is not running
	}
	if got := d.Stats().Dropped; got != 3 {
		t.Errorf("dropped = %d, want 3 of 5 with a queue of 2", got)
	}
}

func TestPageAndHeaders(t *testing.T) {
	_, srv := newTestDashboard(t, nil)
	for path, want := range map[string]string{"/dashboard/": "text/html", "/dashboard/app.js": "text/javascript", "/dashboard/style.css": "text/css"} {
		resp, body := get(t, srv.URL+path)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), want) || len(body) < 100 ||
			!strings.Contains(resp.Header.Get("Content-Security-Policy"), "connect-src 'self'") {
			t.Errorf("GET %s = %d %q (%d bytes), want 200 %s with the CSP", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body), want)
		}
	}
	_, page := get(t, srv.URL+"/dashboard/")
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") || !strings.Contains(page, `src="app.js"`) {
		t.Error("the page loads something from another origin, or not its own script by a relative URL")
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(srv.URL + "/dashboard")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "dashboard/" {
		t.Errorf("GET /dashboard = %d to %q, want 301 to dashboard/", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err = http.Post(srv.URL+"/dashboard/api/config", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST config = %d, want 405", resp.StatusCode)
	}
	if resp, _ := get(t, srv.URL+"/dashboard/api/nope"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET api/nope = %d, want 404", resp.StatusCode)
	}
}

// TestCompliance: api/compliance says the background audit is off without
// Options.Compliance, and serves its results with it.
func TestCompliance(t *testing.T) {
	_, off := newTestDashboard(t, nil)
	if resp, body := get(t, off.URL+"/dashboard/api/compliance"); resp.StatusCode != 200 || strings.TrimSpace(body) != `{"enabled":false}` {
		t.Errorf("GET compliance without the background audit = %d %s, want 200 {\"enabled\":false}", resp.StatusCode, body)
	}
	d := New(Options{Configuration: func(context.Context) (*lint.Set, error) { return &lint.Set{}, nil },
		Compliance: func() any { return map[string]int{"objects": 3} }})
	on := httptest.NewServer(d.Handler())
	defer on.Close()
	if resp, body := get(t, on.URL+"/dashboard/api/compliance"); resp.StatusCode != 200 || strings.TrimSpace(body) != `{"enabled":true,"results":{"objects":3}}` {
		t.Errorf("GET compliance = %d %s, want 200 with enabled and the results", resp.StatusCode, body)
	}
}
