package trace_test

import (
	"bytes"
	"encoding/json"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/trace"
)

// A MutatingAdmissionPolicy step leaves the object before and after; the
// trace shows the change as a JSON patch that turns one into the other, and
// as a field diff.
func TestTraceDerivesPatchFromBeforeAndAfter(t *testing.T) {
	before := `{"metadata":{"labels":{"app":"web","old":"x"},"name":"a/b~c"},"spec":{"containers":[{"image":"nginx","name":"c"}],"tolerations":[{"key":"k"}]}}`
	after := `{"metadata":{"labels":{"app":"web","team":"a"},"name":"a/b~c"},"spec":{"containers":[{"image":"nginx:1.27","name":"c"}],"tolerations":[{"key":"k"},{"key":"j"}],"priority":null}}`
	rec := admission.NewRecord()
	rec.AddStep(admission.Step{Plugin: "MutatingAdmissionPolicy", Name: "p", Config: "b", Matched: true, Mutated: true, Reason: "evaluated",
		Detail: &admission.StepDetail{FailurePolicy: "Fail", Base: []byte(before), After: []byte(after)}})
	s := trace.Capture(podRequest("id1", "alice"), trace.Outcome{Code: 201}, rec).Trace().Steps[0]
	if len(s.Patch) == 0 {
		t.Fatal("no patch derived")
	}
	p, err := jsonpatch.DecodePatch(s.Patch)
	if err != nil {
		t.Fatalf("derived patch %s: %v", s.Patch, err)
	}
	got, err := p.Apply([]byte(before))
	if err != nil {
		t.Fatalf("derived patch %s does not apply: %v", s.Patch, err)
	}
	if !jsonpatch.Equal(got, []byte(after)) {
		t.Errorf("patch %s turns the object into %s, want %s", s.Patch, got, after)
	}
	diff, _ := json.Marshal(s.FieldDiff)
	for _, want := range []string{
		`{"op":"remove","field":"metadata.labels.old","old":"x"}`,
		`{"op":"add","field":"metadata.labels.team","new":"a"}`,
		`{"op":"replace","field":"spec.containers[0].image","old":"nginx","new":"nginx:1.27"}`,
		`{"op":"add","field":"spec.priority","new":null}`,
	} {
		if !bytes.Contains(diff, []byte(want)) {
			t.Errorf("field diff %s lacks %s", diff, want)
		}
	}
}

// Nothing is derived when the step left no change or no parsable JSON.
func TestTraceDerivesNoPatchWithoutChange(t *testing.T) {
	for _, c := range []struct{ before, after string }{
		{`{"a":1}`, `{"a":1}`},
		{`{"a":1}`, `not json`},
	} {
		rec := admission.NewRecord()
		rec.AddStep(admission.Step{Plugin: "MutatingAdmissionPolicy", Name: "p", Matched: true, Mutated: true,
			Detail: &admission.StepDetail{Base: []byte(c.before), After: []byte(c.after)}})
		if s := trace.Capture(podRequest("id1", "alice"), trace.Outcome{Code: 201}, rec).Trace().Steps[0]; len(s.Patch) != 0 {
			t.Errorf("%s -> %s: patch %s", c.before, c.after, s.Patch)
		}
	}
}

// A policy's change to a Secret is shown by field, never by value.
func TestTraceDerivedPatchOfSecretIsRedacted(t *testing.T) {
	q := podRequest("id1", "alice")
	q.Resource = "secrets"
	rec := admission.NewRecord()
	rec.AddStep(admission.Step{Plugin: "MutatingAdmissionPolicy", Name: "p", Matched: true, Mutated: true, Detail: &admission.StepDetail{
		Base: []byte(`{"data":{"password":"b2xkLXNlY3JldA=="}}`), After: []byte(`{"data":{"password":"bmV3LXNlY3JldA=="}}`)}})
	b, _ := json.Marshal(trace.Capture(q, trace.Outcome{Code: 201}, rec).Trace())
	for _, secret := range []string{"bmV3LXNlY3JldA==", "b2xkLXNlY3JldA=="} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("trace of a Secret shows %s: %s", secret, b)
		}
	}
	if !bytes.Contains(b, []byte(`"field":"data.password"`)) {
		t.Errorf("trace of a Secret lost the field changed: %s", b)
	}
}
