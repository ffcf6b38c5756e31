package dashboard

import (
	"context"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/trace"
	"github.com/admitd/admitd/pkg/lint"
)

// BenchmarkObserve is what the dashboard costs per request that ran
// admission, with nobody watching: Observe on the request's goroutine and
// Run's statistics, for a create with the default plugins' 21 steps and
// two webhook calls. It runs Run's work inline: the goroutine switch it
// costs besides is the scheduler's.
func BenchmarkObserve(b *testing.B) {
	rec := admission.NewRecord()
	for range 21 {
		rec.AddStep(admission.Step{Plugin: "NamespaceLifecycle", Matched: true, Reason: "admit", Duration: 300 * time.Nanosecond})
	}
	for _, name := range []string{"a.example.com", "b.example.com"} {
		rec.AddStep(admission.Step{Plugin: "ValidatingAdmissionWebhook", Name: name, Config: "c", Matched: true, Reason: "called",
			Duration: time.Millisecond, Detail: &admission.StepDetail{FailurePolicy: "Fail"}})
	}
	e := trace.Capture(trace.Request{AuditID: "id", Verb: "create", Resource: "configmaps"}, trace.Outcome{Code: 201}, rec)
	d := New(Options{QueueSize: 1, Configuration: func(context.Context) (*lint.Set, error) { return &lint.Set{}, nil }})
	b.ReportAllocs()
	for b.Loop() {
		d.Observe(e, rec, time.Millisecond)
		d.handle(<-d.queue) // what Run does
	}
	if d.dropped.Load() != 0 || d.Stats().Calls[0].Calls == 0 {
		b.Fatal("requests dropped or not counted")
	}
}
