package authzwebhook

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/admitd/admitd/internal/auth"
)

// series is one labelled series of a gathered family: a counter's value,
// or a histogram's sample count.
func series(t *testing.T, reg *prometheus.Registry, family string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// hasLabels reports whether m has exactly the labels name=value, … of kv.
func hasLabels(m *dto.Metric, kv []string) bool {
	if len(m.GetLabel()) != len(kv)/2 {
		return false
	}
	for i := 0; i < len(kv); i += 2 {
		if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
			return l.GetName() == kv[i] && l.GetValue() == kv[i+1]
		}) {
			return false
		}
	}
	return true
}

// metered is an authorizer called "remote" of r, metered on a new registry.
func metered(t *testing.T, r *remote, edit func(*Options)) (*Authorizer, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	o := testOptions()
	o.Name, o.Metrics = "remote", NewMetrics(reg)
	if edit != nil {
		edit(&o)
	}
	return newTestAuthorizer(t, r, o), reg
}

// The webhook series as kube-apiserver exposes them: names, help text with
// its stability level, labels.
func TestWebhookMetricsExposition(t *testing.T) {
	r := startRemote(t, func(map[string]any) (int, any) { return status(true, false, "") })
	w, reg := metered(t, r, nil)
	if d, _, err := w.Authorize(context.Background(), podGet); d != auth.DecisionAllow || err != nil {
		t.Fatalf("Authorize = %v, %v; want Allow", d, err)
	}
	want := `# HELP apiserver_authorization_webhook_evaluations_total [ALPHA] Round-trips to authorization webhooks.
# TYPE apiserver_authorization_webhook_evaluations_total counter
apiserver_authorization_webhook_evaluations_total{name="remote",result="success"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "apiserver_authorization_webhook_evaluations_total"); err != nil {
		t.Error(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "apiserver_authorization_webhook_duration_seconds" {
			continue
		}
		if got, want := mf.GetHelp(), "[ALPHA] Request latency in seconds."; got != want {
			t.Errorf("duration help = %q, want %q", got, want)
		}
		var bounds []float64
		for _, b := range mf.GetMetric()[0].GetHistogram().GetBucket() {
			bounds = append(bounds, b.GetUpperBound())
		}
		if !slices.Equal(bounds, prometheus.DefBuckets) {
			t.Errorf("duration buckets = %v, want the default buckets %v", bounds, prometheus.DefBuckets)
		}
		return
	}
	t.Error("apiserver_authorization_webhook_duration_seconds not gathered")
}

// Each round-trip is counted and timed with its result; a failed call that
// ends in no opinion (and whose request is not gone) fails open.
func TestWebhookMetrics(t *testing.T) {
	slow := func(d time.Duration) func(map[string]any) (int, any) {
		return func(map[string]any) (int, any) {
			time.Sleep(d)
			return status(true, false, "")
		}
	}
	tests := []struct {
		name     string
		answer   func(map[string]any) (int, any)
		edit     func(*Options)
		ctx      func() (context.Context, context.CancelFunc)
		result   string
		calls    float64
		failOpen float64
	}{
		{name: "success", answer: slow(0), result: ResultSuccess, calls: 1},
		{name: "forbidden", answer: func(map[string]any) (int, any) { return http.StatusForbidden, map[string]any{} },
			result: ResultError, calls: 1, failOpen: 1},
		{name: "500 retried", answer: func(map[string]any) (int, any) { return http.StatusInternalServerError, map[string]any{} },
			result: ResultError, calls: 3, failOpen: 1},
		{name: "504 is a timeout", answer: func(map[string]any) (int, any) { return http.StatusGatewayTimeout, map[string]any{} },
			result: ResultTimeout, calls: 3, failOpen: 1},
		{name: "Timeout status", answer: func(map[string]any) (int, any) {
			return http.StatusForbidden, map[string]any{"kind": "Status", "reason": "Timeout"}
		}, result: ResultTimeout, calls: 1, failOpen: 1},
		{name: "undecodable", answer: func(map[string]any) (int, any) { return http.StatusOK, "nope" },
			result: ResultError, calls: 1, failOpen: 1},
		{name: "client timeout", answer: slow(300 * time.Millisecond),
			edit:   func(o *Options) { o.Timeout, o.Backoff.Steps = 30*time.Millisecond, 1 },
			result: ResultTimeout, calls: 1, failOpen: 1},
		{name: "failurePolicy Deny does not fail open", answer: func(map[string]any) (int, any) { return http.StatusForbidden, map[string]any{} },
			edit: func(o *Options) { o.DecisionOnError = auth.DecisionDeny }, result: ResultError, calls: 1},
		{name: "canceled", answer: slow(300 * time.Millisecond),
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 30*time.Millisecond)
			},
			result: ResultCanceled, calls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startRemote(t, tt.answer)
			w, reg := metered(t, r, tt.edit)
			ctx, cancel := context.Background(), func() {}
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			_, _, _ = w.Authorize(ctx, podGet)
			if got := series(t, reg, "apiserver_authorization_webhook_evaluations_total", "name", "remote", "result", tt.result); got != tt.calls {
				t.Errorf("webhook_evaluations_total{result=%q} = %v, want %v", tt.result, got, tt.calls)
			}
			if got := series(t, reg, "apiserver_authorization_webhook_duration_seconds", "name", "remote", "result", tt.result); got != tt.calls {
				t.Errorf("webhook_duration_seconds{result=%q} count = %v, want %v", tt.result, got, tt.calls)
			}
			if got := series(t, reg, "apiserver_authorization_webhook_evaluations_fail_open_total", "name", "remote", "result", tt.result); got != tt.failOpen {
				t.Errorf("webhook_evaluations_fail_open_total{result=%q} = %v, want %v", tt.result, got, tt.failOpen)
			}
			if n := testutil.CollectAndCount(w.metrics.evaluations); n != 1 {
				t.Errorf("webhook_evaluations_total has %d series, want only result %q", n, tt.result)
			}
		})
	}
}

// A cached answer is no round-trip.
func TestWebhookMetricsCached(t *testing.T) {
	r := startRemote(t, func(map[string]any) (int, any) { return status(true, false, "") })
	w, reg := metered(t, r, nil)
	for range 3 {
		_, _, _ = w.Authorize(context.Background(), podGet)
	}
	if got := series(t, reg, "apiserver_authorization_webhook_evaluations_total", "name", "remote", "result", "success"); got != 1 {
		t.Errorf("webhook_evaluations_total{result=success} after 3 identical questions = %v, want 1", got)
	}
}

// Match conditions are timed on every evaluation; an exclusion and an
// evaluation error are counted as upstream, both when an error precedes a
// false condition.
func TestMatchConditionMetrics(t *testing.T) {
	const errs, excl, secs = "apiserver_authorization_match_condition_evaluation_errors_total",
		"apiserver_authorization_match_condition_exclusions_total", "apiserver_authorization_match_condition_evaluation_seconds"
	tests := []struct {
		name             string
		exprs            []string
		errors, excluded float64
	}{
		{"match", []string{"request.user == 'alice'"}, 0, 0},
		{"excluded", []string{"request.user == 'bob'"}, 0, 1},
		{"error", []string{"request.nonResourceAttributes.path == '/'"}, 1, 0},
		{"error then false", []string{"request.nonResourceAttributes.path == '/'", "false"}, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startRemote(t, func(map[string]any) (int, any) { return status(true, false, "") })
			w, reg := metered(t, r, func(o *Options) {
				m, err := NewMatchConditions(tt.exprs)
				if err != nil {
					t.Fatal(err)
				}
				o.MatchConditions = m
			})
			_, _, _ = w.Authorize(context.Background(), podGet)
			labels := []string{"type", "Webhook", "name", "remote"}
			if got := series(t, reg, errs, labels...); got != tt.errors {
				t.Errorf("%s = %v, want %v", errs, got, tt.errors)
			}
			if got := series(t, reg, excl, labels...); got != tt.excluded {
				t.Errorf("%s = %v, want %v", excl, got, tt.excluded)
			}
			if got := series(t, reg, secs, labels...); got != 1 {
				t.Errorf("%s count = %v, want 1", secs, got)
			}
		})
	}
	// Without conditions nothing is evaluated, so nothing is observed.
	r := startRemote(t, func(map[string]any) (int, any) { return status(true, false, "") })
	w, reg := metered(t, r, nil)
	_, _, _ = w.Authorize(context.Background(), podGet)
	if got := series(t, reg, secs, "type", "Webhook", "name", "remote"); got != 0 {
		t.Errorf("%s count without conditions = %v, want 0", secs, got)
	}
}

func TestMatchConditionMetricsExposition(t *testing.T) {
	r := startRemote(t, func(map[string]any) (int, any) { return status(true, false, "") })
	w, reg := metered(t, r, func(o *Options) {
		o.MatchConditions, _ = NewMatchConditions([]string{"request.nonResourceAttributes.path == '/'", "false"})
	})
	_, _, _ = w.Authorize(context.Background(), podGet)
	want := `# HELP apiserver_authorization_match_condition_evaluation_errors_total [ALPHA] Total number of errors when an authorization webhook encounters a match condition error split by authorizer type and name.
# TYPE apiserver_authorization_match_condition_evaluation_errors_total counter
apiserver_authorization_match_condition_evaluation_errors_total{name="remote",type="Webhook"} 1
# HELP apiserver_authorization_match_condition_exclusions_total [ALPHA] Total number of exclusions when an authorization webhook is skipped because match conditions exclude it.
# TYPE apiserver_authorization_match_condition_exclusions_total counter
apiserver_authorization_match_condition_exclusions_total{name="remote",type="Webhook"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"apiserver_authorization_match_condition_evaluation_errors_total", "apiserver_authorization_match_condition_exclusions_total"); err != nil {
		t.Error(err)
	}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != "apiserver_authorization_match_condition_evaluation_seconds" {
			continue
		}
		if got, want := mf.GetHelp(), "[ALPHA] Authorization match condition evaluation time in seconds, split by authorizer type and name."; got != want {
			t.Errorf("evaluation_seconds help = %q, want %q", got, want)
		}
		var bounds []float64
		for _, b := range mf.GetMetric()[0].GetHistogram().GetBucket() {
			bounds = append(bounds, b.GetUpperBound())
		}
		if want := []float64{0.001, 0.005, 0.01, 0.025, 0.1, 0.2, 0.25}; !slices.Equal(bounds, want) {
			t.Errorf("evaluation_seconds buckets = %v, want %v", bounds, want)
		}
		return
	}
	t.Error("apiserver_authorization_match_condition_evaluation_seconds not gathered")
}
