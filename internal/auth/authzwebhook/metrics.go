package authzwebhook

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Results of one call to a remote authorizer, the result label of the
// webhook metrics.
const (
	// ResultSuccess: a well-formed answer.
	ResultSuccess = "success"
	// ResultCanceled: the request being authorized was canceled or timed
	// out first.
	ResultCanceled = "canceled"
	// ResultTimeout: the call timed out, or the remote answered 504.
	ResultTimeout = "timeout"
	// ResultError: any other failure.
	ResultError = "error"
)

// Metrics are kube-apiserver's webhook authorizer metrics, with its names,
// labels, buckets and help text (stability level included):
// apiserver_authorization_webhook_{evaluations_total, duration_seconds,
// evaluations_fail_open_total}{name,result} and
// apiserver_authorization_match_condition_{evaluation_errors_total,
// exclusions_total, evaluation_seconds}{type,name}. One Metrics serves every
// webhook authorizer of a server, including those of a reloaded
// configuration. A nil *Metrics records nothing.
type Metrics struct {
	evaluations, failOpen        *prometheus.CounterVec
	duration                     *prometheus.HistogramVec
	matchErrors, matchExclusions *prometheus.CounterVec
	matchSeconds                 *prometheus.HistogramVec
}

// matchSecondsBuckets are upstream's for match condition evaluation.
var matchSecondsBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.1, 0.2, 0.25}

// NewMetrics registers the metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "apiserver", Subsystem: "authorization",
			Name: name, Help: "[ALPHA] " + help}, labels)
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "apiserver", Subsystem: "authorization",
			Name: name, Help: "[ALPHA] " + help, Buckets: buckets}, labels)
	}
	m := &Metrics{
		evaluations: counter("webhook_evaluations_total", "Round-trips to authorization webhooks.", "name", "result"),
		duration: histogram("webhook_duration_seconds", "Request latency in seconds.",
			prometheus.DefBuckets, "name", "result"),
		failOpen: counter("webhook_evaluations_fail_open_total", "NoOpinion results due to webhook timeout or error.",
			"name", "result"),
		matchErrors: counter("match_condition_evaluation_errors_total",
			"Total number of errors when an authorization webhook encounters a match condition error split by authorizer type and name.",
			"type", "name"),
		matchExclusions: counter("match_condition_exclusions_total",
			"Total number of exclusions when an authorization webhook is skipped because match conditions exclude it.",
			"type", "name"),
		matchSeconds: histogram("match_condition_evaluation_seconds",
			"Authorization match condition evaluation time in seconds, split by authorizer type and name.",
			matchSecondsBuckets, "type", "name"),
	}
	reg.MustRegister(m.evaluations, m.duration, m.failOpen, m.matchErrors, m.matchExclusions, m.matchSeconds)
	return m
}

// observeCall records one round-trip of the authorizer called name.
func (m *Metrics) observeCall(name, result string, took time.Duration) {
	if m == nil {
		return
	}
	m.evaluations.WithLabelValues(name, result).Inc()
	m.duration.WithLabelValues(name, result).Observe(took.Seconds())
}

// observeFailOpen records a failed call answered with no opinion.
func (m *Metrics) observeFailOpen(name, result string) {
	if m == nil {
		return
	}
	m.failOpen.WithLabelValues(name, result).Inc()
}

// observeMatch records one evaluation of a webhook's match conditions:
// its time always, an error if any condition failed to evaluate, an
// exclusion if one was false (both may be recorded, as upstream does when
// an error precedes a false condition).
func (m *Metrics) observeMatch(name string, took time.Duration, errored, excluded bool) {
	if m == nil {
		return
	}
	const typ = "Webhook"
	m.matchSeconds.WithLabelValues(typ, name).Observe(took.Seconds())
	if errored {
		m.matchErrors.WithLabelValues(typ, name).Inc()
	}
	if excluded {
		m.matchExclusions.WithLabelValues(typ, name).Inc()
	}
}

// callResult classifies the outcome of one call, as upstream: the caller's
// context ended, the call timed out (or the remote said 504 or a Timeout
// Status), it failed otherwise, or it succeeded.
func callResult(ctx context.Context, err error) string {
	var se *statusError
	switch {
	case err == nil:
		return ResultSuccess
	case ctx.Err() != nil:
		return ResultCanceled
	case utilnet.IsTimeout(err) || errors.Is(err, context.DeadlineExceeded):
		return ResultTimeout
	case errors.As(err, &se) && (se.code == http.StatusGatewayTimeout || se.reason == metav1.StatusReasonTimeout):
		return ResultTimeout
	}
	return ResultError
}
