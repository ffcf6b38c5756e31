package trace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/trace"
)

// denyAll is a validating plugin that rejects every request.
type denyAll struct{}

func (denyAll) Handles(admission.Operation) bool { return true }
func (denyAll) Validate(context.Context, *admission.Attributes) error {
	return errors.New("denied by denyAll")
}

// record is the record of a pod CREATE: a plain plugin, a webhook that
// patched, one skipped by its namespaceSelector, a policy that denied and
// a webhook that failed open.
func record(t *testing.T, deny bool) *admission.Record {
	t.Helper()
	rec := admission.NewRecord()
	rec.AddStep(admission.Step{Plugin: "NamespaceLifecycle", Matched: true, Reason: "admit", Duration: 3 * time.Microsecond})
	rec.AddStep(admission.Step{Plugin: "MutatingAdmissionWebhook", Name: "label.example.com", Config: "labels", Matched: true,
		Mutated: true, Reason: "called", Duration: 2 * time.Millisecond, Detail: &admission.StepDetail{
			ReviewVersion: "admission.k8s.io/v1", FailurePolicy: "Fail",
			Patch:    []byte(`[{"op":"add","path":"/metadata/labels/team","value":"a"},{"op":"replace","path":"/spec/containers/0/image","value":"nginx:1.27"}]`),
			Base:     []byte(`{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`),
			Warnings: []string{"labelled"}, AuditAnnotations: map[string]string{"k": "v"}}})
	rec.AddStep(admission.Step{Plugin: "MutatingAdmissionWebhook", Name: "other.example.com", Config: "others", Reason: "skipped",
		Skip: admission.SkipNamespaceSelector, Detail: &admission.StepDetail{FailurePolicy: "Fail",
			Why: admission.Explanation(`namespaceSelector "team=other" does not select namespace "a"`)}})
	rec.AddStep(admission.Step{Plugin: "ValidatingAdmissionWebhook", Name: "flaky.example.com", Config: "flaky", Matched: true, Reason: "error",
		Err: "failed calling webhook", Detail: &admission.StepDetail{FailurePolicy: "Ignore", FailedOpen: true}})
	if err := rec.AddAnnotationWithLevel("patch.webhook.admission.k8s.io/round_0_index_0", `{"patch":"secret stuff"}`, admission.LevelRequest); err != nil {
		t.Fatal(err)
	}
	rec.AddWarning("labelled")
	if deny {
		chain := admission.NewChain(admission.NamedPlugin{Name: "DenyAll", Plugin: denyAll{}})
		a := &admission.Attributes{Operation: admission.Create, Name: "web", Namespace: "a", Record: rec}
		if err := chain.Validate(context.Background(), a); err == nil {
			t.Fatal("denyAll admitted")
		}
	}
	return rec
}

func podRequest(id, user string) trace.Request {
	return trace.Request{AuditID: id, User: user, Verb: "create", Operation: "CREATE", APIVersion: "v1", Resource: "pods",
		Namespace: "a", Name: "web", Time: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
}

func TestTraceSteps(t *testing.T) {
	tr := trace.Capture(podRequest("id1", "alice"), trace.Outcome{Code: 201, Duration: 5 * time.Millisecond}, record(t, false)).Trace()
	if tr.APIVersion != trace.APIVersion || tr.Kind != trace.Kind || tr.Decision != trace.Allowed || tr.Code != 201 || tr.Duration != "5ms" {
		t.Fatalf("trace = %+v", tr)
	}
	want := []struct{ phase, outcome, skip string }{
		{"mutating", trace.OutcomeAdmitted, ""},
		{"mutating", trace.OutcomeMutated, ""},
		{"mutating", trace.OutcomeSkipped, admission.SkipNamespaceSelector},
		{"validating", trace.OutcomeFailedOpen, ""},
	}
	if len(tr.Steps) != len(want) {
		t.Fatalf("%d steps, want %d: %+v", len(tr.Steps), len(want), tr.Steps)
	}
	for i, w := range want {
		if s := tr.Steps[i]; s.Phase != w.phase || s.Outcome != w.outcome || s.SkipReason != w.skip {
			t.Errorf("step %d = %s/%s/%s, want %s/%s/%s", i, s.Phase, s.Outcome, s.SkipReason, w.phase, w.outcome, w.skip)
		}
	}
	mut := tr.Steps[1]
	diff, _ := json.Marshal(mut.FieldDiff)
	if got := string(diff); got != `[{"op":"add","field":"metadata.labels.team","new":"a"},{"op":"replace","field":"spec.containers[0].image","old":"nginx","new":"nginx:1.27"}]` {
		t.Errorf("field diff = %s", got)
	}
	if mut.ReviewVersion != "admission.k8s.io/v1" || mut.Warnings[0] != "labelled" || mut.AuditAnnotations["k"] != "v" {
		t.Errorf("mutating step = %+v", mut)
	}
	if got := tr.Steps[2].Reason; got != `namespaceSelector "team=other" does not select namespace "a"` {
		t.Errorf("skip reason = %q", got)
	}
}

func TestTraceDecisionDenied(t *testing.T) {
	e := trace.Capture(podRequest("id1", "alice"), trace.Outcome{Code: 403, Message: "denied by denyAll"}, record(t, true))
	tr := e.Trace()
	last := tr.Steps[len(tr.Steps)-1]
	if tr.Decision != trace.Denied || tr.RejectedBy != "DenyAll" || last.Outcome != trace.OutcomeDenied || last.Error != "denied by denyAll" {
		t.Errorf("decision %s by %q, last step %+v; want Denied by DenyAll", tr.Decision, tr.RejectedBy, last)
	}
	if e := trace.Capture(podRequest("id2", "alice"), trace.Outcome{Code: 409}, record(t, false)); e.Decision() != trace.Error {
		t.Errorf("a 409 after admission = %s, want Error", e.Decision())
	}
}

// A Secret's patches and patch annotations never show their values.
func TestTraceRedactsSecrets(t *testing.T) {
	q := podRequest("id1", "alice")
	q.Resource = "secrets"
	rec := admission.NewRecord()
	rec.AddStep(admission.Step{Plugin: "MutatingAdmissionWebhook", Name: "w", Matched: true, Mutated: true, Detail: &admission.StepDetail{
		Patch: []byte(`[{"op":"replace","path":"/data/password","value":"bmV3LXNlY3JldA=="}]`),
		Base:  []byte(`{"data":{"password":"b2xkLXNlY3JldA=="}}`)}})
	_ = rec.AddAnnotationWithLevel("patch.webhook.admission.k8s.io/round_0_index_0", "bmV3LXNlY3JldA==", admission.LevelRequest)
	b, err := json.Marshal(trace.Capture(q, trace.Outcome{Code: 201}, rec).Trace())
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"bmV3LXNlY3JldA==", "b2xkLXNlY3JldA=="} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("trace of a Secret shows %s: %s", secret, b)
		}
	}
	if !bytes.Contains(b, []byte(`"field":"data.password"`)) || !bytes.Contains(b, []byte(trace.Redacted)) {
		t.Errorf("trace of a Secret lost the field changed: %s", b)
	}
}

func TestRender(t *testing.T) {
	var b strings.Builder
	tr := trace.Capture(podRequest("id1", "alice"), trace.Outcome{Code: 201, Duration: time.Millisecond}, record(t, false)).Trace()
	if err := trace.Render(&b, tr); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"CREATE pods a/web by alice\n",
		"decision: Allowed (201)\n",
		"audit ID id1 at 2026-11-26T08:00:00.000Z, 1ms\n",
		"├─ NamespaceLifecycle: admitted, 3µs\n",
		"└─ MutatingAdmissionWebhook\n",
		"   ├─ label.example.com (labels): mutated, 2ms, admission.k8s.io/v1, failurePolicy Fail\n",
		`   │     + metadata.labels.team: "a"` + "\n",
		`   │     ~ spec.containers[0].image: "nginx" -> "nginx:1.27"` + "\n",
		"   └─ other.example.com (others): skipped (NamespaceSelector)\n",
		`         why: namespaceSelector "team=other" does not select namespace "a"` + "\n",
		"   └─ flaky.example.com (flaky): failed-open, failurePolicy Ignore\n",
		"         error: failed calling webhook\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tree lacks %q:\n%s", want, out)
		}
	}
}

func TestRingKeepsNewestAndFilters(t *testing.T) {
	r := trace.NewRing(3)
	for i, u := range []string{"old", "alice", "bob", "alice"} {
		q := podRequest(string(rune('a'+i)), u)
		if i == 2 {
			q.Resource, q.APIGroup = "deployments", "apps"
		}
		r.Add(trace.Capture(q, trace.Outcome{Code: 201}, record(t, false)))
	}
	if r.Get("a") != nil || r.Get("d") == nil {
		t.Errorf("ring of 3 after 4: Get(a)=%v Get(d)=%v; want the oldest dropped", r.Get("a"), r.Get("d"))
	}
	ids := func(f trace.Filter) string {
		var s string
		for _, e := range r.List(f) {
			s += e.Request().AuditID
		}
		return s
	}
	for _, tc := range []struct {
		f    trace.Filter
		want string
	}{
		{trace.Filter{}, "dcb"},
		{trace.Filter{User: "alice"}, "db"},
		{trace.Filter{Resource: "deployments.apps"}, "c"},
		{trace.Filter{Resource: "pods", Namespace: "a"}, "db"},
		{trace.Filter{Decision: "denied"}, ""},
		{trace.Filter{Decision: "allowed", Limit: 1}, "d"},
	} {
		if got := ids(tc.f); got != tc.want {
			t.Errorf("List(%+v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func TestHandler(t *testing.T) {
	r := trace.NewRing(10)
	r.Add(trace.Capture(podRequest("id1", "alice"), trace.Outcome{Code: 201}, record(t, false)))
	srv := httptest.NewServer(trace.Handler(r))
	defer srv.Close()
	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/admission/traces/id1", 200, `"auditID":"id1"`},
		{"GET", "/admission/traces?user=alice", 200, `"kind":"TraceList"`},
		{"GET", "/admission/traces?user=bob", 200, `"items":[]`},
		{"GET", "/admission/traces/id1?output=tree", 200, "CREATE pods a/web by alice"},
		{"GET", "/admission/traces/nope", 404, `"reason":"NotFound"`},
		{"GET", "/admission/traces?decision=maybe", 400, "decision must be Allowed, Denied or Error"},
		{"POST", "/admission/traces", 405, `"reason":"MethodNotAllowed"`},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(b.String(), tc.body) {
			t.Errorf("%s %s = %d %s, want %d with %q", tc.method, tc.path, resp.StatusCode, b.String(), tc.code, tc.body)
		}
	}
}
