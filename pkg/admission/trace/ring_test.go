package trace_test

import (
	"testing"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/trace"
)

// mutatedOn returns the entry of a request whose mutating step started from
// an object of size bytes of JSON (and, for a policy, ended with one).
func mutatedOn(id string, size int, policy bool) *trace.Entry {
	rec := admission.NewRecord()
	d := &admission.StepDetail{Base: make([]byte, size), Patch: []byte(`[{"op":"add","path":"/metadata/labels","value":{}}]`)}
	if policy {
		d.Patch, d.After = nil, make([]byte, size)
	}
	rec.AddStep(admission.Step{Plugin: "MutatingAdmissionWebhook", Name: "w", Matched: true, Mutated: true, Detail: d})
	return trace.Capture(podRequest(id, "alice"), trace.Outcome{Code: 201}, rec)
}

// TestEntryBytesCountTheObjects: an entry's size grows with the object
// JSON its steps keep, Base and After both.
func TestEntryBytesCountTheObjects(t *testing.T) {
	small, big, policy := mutatedOn("s", 10, false).Bytes(), mutatedOn("b", 1<<20, false).Bytes(), mutatedOn("p", 1<<20, true).Bytes()
	if big-small < 1<<20-10 || big-small > 1<<20 {
		t.Errorf("a 1 MiB base adds %d bytes, want 1 MiB less the 10 of the small one", big-small)
	}
	if policy-big < 1<<20-100 {
		t.Errorf("a policy step's before and after count %d bytes, want about 2 MiB", policy)
	}
}

// TestRingBoundedByBytes: past its byte budget the ring drops its oldest
// entries, however few it holds; an entry larger than the budget is kept
// alone; the count bound still applies.
func TestRingBoundedByBytes(t *testing.T) {
	one := mutatedOn("x", 1000, false).Bytes()
	r := trace.NewRingBytes(100, 3*one)
	for _, id := range []string{"a", "b", "c", "d"} {
		r.Add(mutatedOn(id, 1000, false))
	}
	if n, b := r.Usage(); n != 3 || b != 3*one || r.Get("a") != nil || r.Get("b") == nil || r.Get("d") == nil {
		t.Errorf("after 4 entries in a 3-entry budget: %d entries, %d bytes, a kept %v", n, b, r.Get("a") != nil)
	}
	r.Add(mutatedOn("huge", 10000, false))
	if n, _ := r.Usage(); n != 1 || r.Get("huge") == nil {
		t.Errorf("an entry over the whole budget: %d entries kept, want it alone", n)
	}
	r.Add(mutatedOn("e", 1000, false))
	if n, b := r.Usage(); n != 1 || b != one || r.Get("e") == nil {
		t.Errorf("after the huge one: %d entries, %d bytes; want only e", n, b)
	}
	counted := trace.NewRingBytes(2, 1<<30)
	for _, id := range []string{"a", "b", "c"} {
		counted.Add(mutatedOn(id, 1000, false))
	}
	if n, b := counted.Usage(); n != 2 || b != 2*one || counted.Get("a") != nil {
		t.Errorf("ring of 2 with room in bytes after 3: %d entries, %d bytes", n, b)
	}
	var ids string
	for _, e := range counted.List(trace.Filter{}) {
		ids += e.Request().AuditID
	}
	if ids != "cb" {
		t.Errorf("List = %q, want newest first: cb", ids)
	}
}

// TestCaptureReleasesPluginState: a captured record no longer holds what
// plugins kept between the mutating passes (a copy of the object).
func TestCaptureReleasesPluginState(t *testing.T) {
	rec := admission.NewRecord()
	rec.AddStep(admission.Step{Plugin: "MutatingAdmissionWebhook", Name: "w", Matched: true})
	rec.SetPluginState("MutatingAdmissionWebhook", make([]byte, 1<<20))
	if trace.Capture(podRequest("x", "alice"), trace.Outcome{Code: 201}, rec) == nil {
		t.Fatal("nothing captured")
	}
	if st := rec.PluginState("MutatingAdmissionWebhook"); st != nil {
		t.Errorf("the captured record still holds plugin state of %T", st)
	}
}
