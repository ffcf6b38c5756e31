package dashboard

import (
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/admission"
)

func TestStatsCountsAndPercentiles(t *testing.T) {
	s := newStats()
	now := time.Unix(1000, 0)
	for i := 1; i <= 100; i++ {
		rec := admission.NewRecord()
		rec.AddStep(admission.Step{Plugin: "NamespaceLifecycle", Matched: true, Duration: time.Second}) // a plain plugin
		rec.AddStep(admission.Step{Plugin: "ValidatingAdmissionWebhook", Name: "skip.example.com", Config: "c", Skip: admission.SkipRule, Reason: "skipped"})
		step := admission.Step{Plugin: "ValidatingAdmissionWebhook", Name: "a.example.com", Config: "c", Matched: true,
			Reason: "called", Duration: time.Duration(i) * time.Millisecond, Detail: &admission.StepDetail{FailurePolicy: "Fail"}}
		switch {
		case i <= 5: // a call error under failurePolicy Fail
			step.Reason, step.Err = "error", "connection refused"
		case i <= 8: // the same under Ignore
			step.Reason, step.Err, step.Detail.FailurePolicy, step.Detail.FailedOpen = "error", "connection refused", "Ignore", true
		case i <= 10: // a denial
			step.Reason, step.Err = "denied", "admission webhook denied the request"
		}
		rec.AddStep(step)
		if i%2 == 0 {
			rec.AddStep(admission.Step{Plugin: "ValidatingAdmissionPolicy", Name: "p", Config: "b", Matched: true,
				Reason: "failed: no", Duration: time.Millisecond})
		}
		s.add(rec, now)
	}
	requests, calls := s.snapshot()
	if requests != 100 || len(calls) != 2 {
		t.Fatalf("snapshot = %d requests, %d webhooks and policies %+v; want 100 and 2", requests, len(calls), calls)
	}
	policy, hook := calls[0], calls[1]
	want := CallStats{Plugin: "ValidatingAdmissionWebhook", Name: "a.example.com", Configuration: "c", Calls: 100, Errors: 8, FailedOpen: 3,
		Rejected: 7, ErrorRate: 0.08, FailOpenRate: 0.03, P50: 50, P90: 90, P99: 99, Samples: 100, Last: now}
	if hook != want {
		t.Errorf("webhook stats = %+v\nwant %+v", hook, want)
	}
	if policy.Plugin != "ValidatingAdmissionPolicy" || policy.Calls != 50 || policy.Rejected != 50 || policy.Errors != 0 || policy.P99 != 1 {
		t.Errorf("policy stats = %+v, want 50 calls, all rejected, no error, p99 1ms", policy)
	}
}

func TestStatsWindowKeepsLatestCalls(t *testing.T) {
	s := newStats()
	for i := range WindowSize + 10 {
		rec := admission.NewRecord()
		d := time.Millisecond
		if i >= 10 {
			d = 2 * time.Millisecond // the first 10 fall out of the window
		}
		rec.AddStep(admission.Step{Plugin: "MutatingAdmissionWebhook", Name: "m", Matched: true, Duration: d})
		s.add(rec, time.Now())
	}
	_, calls := s.snapshot()
	if c := calls[0]; c.Calls != WindowSize+10 || c.Samples != WindowSize || c.P50 != 2 {
		t.Errorf("stats = %+v, want %d calls, %d samples, p50 2ms", c, WindowSize+10, WindowSize)
	}
}

func TestPercentileNearestRank(t *testing.T) {
	for _, tc := range []struct {
		n    int
		p    float64
		want float64
	}{{0, 0.5, 0}, {1, 0.99, 1}, {2, 0.5, 1}, {3, 0.5, 2}, {10, 0.9, 9}, {10, 0.99, 10}} {
		var sorted []time.Duration
		for i := 1; i <= tc.n; i++ {
			sorted = append(sorted, time.Duration(i)*time.Millisecond)
		}
		if got := percentile(sorted, tc.p); got != tc.want {
			t.Errorf("percentile(1..%d ms, %v) = %v, want %v", tc.n, tc.p, got, tc.want)
		}
	}
}
