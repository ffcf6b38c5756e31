package policies

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/admitd/admitd/pkg/admission"
	admcel "github.com/admitd/admitd/pkg/admission/cel"
)

// Metrics are upstream's policy metrics, with its names, labels and
// buckets. A nil *Metrics records nothing.
type Metrics struct {
	vapCheck   *prometheus.CounterVec
	vapLatency *prometheus.HistogramVec
	mapCheck   *prometheus.CounterVec
	mapLatency *prometheus.HistogramVec
}

var policyBuckets = []float64{0.0000005, 0.001, 0.01, 0.1, 1.0}

// NewMetrics creates the metrics and registers them with reg (when not
// nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	vapLabels := []string{"policy", "policy_binding", "error_type", "enforcement_action"}
	mapLabels := []string{"policy", "policy_binding", "error_type"}
	m := &Metrics{
		vapCheck: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "apiserver", Subsystem: "validating_admission_policy",
			Name: "check_total",
			Help: "[BETA] Validation admission policy check total, labeled by policy and further identified by binding and enforcement action taken."},
			vapLabels),
		vapLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "apiserver", Subsystem: "validating_admission_policy",
			Name:    "check_duration_seconds",
			Help:    "[BETA] Validation admission latency for individual validation expressions in seconds, labeled by policy and further including binding and enforcement action taken.",
			Buckets: policyBuckets}, vapLabels),
		mapCheck: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "apiserver", Subsystem: "mutating_admission_policy",
			Name: "check_total",
			Help: "[ALPHA] Mutation admission policy check total, labeled by policy and further identified by binding."},
			mapLabels),
		mapLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "apiserver", Subsystem: "mutating_admission_policy",
			Name:    "check_duration_seconds",
			Help:    "[ALPHA] Mutation admission latency for individual mutation expressions in seconds, labeled by policy and binding.",
			Buckets: policyBuckets}, mapLabels),
	}
	if reg != nil {
		reg.MustRegister(m.vapCheck, m.vapLatency, m.mapCheck, m.mapLatency)
	}
	return m
}

// errorType classifies an outcome for the error_type label.
func errorType(message string) string {
	switch {
	case strings.HasPrefix(message, "compilation"):
		return "compile_error"
	case strings.HasPrefix(message, "validation failed due to running out of cost budget"):
		return "out_of_budget"
	}
	return "invalid_error"
}

// observeValidation counts one ValidatingAdmissionPolicy decision under
// action (deny, warn, audit, or allow for an ignored error).
func (m *Metrics) observeValidation(policy, binding string, d decision, action string) {
	if m == nil {
		return
	}
	et := "no_error"
	if d.eval != evalAdmit {
		et = errorType(d.message)
	}
	m.vapCheck.WithLabelValues(policy, binding, et, action).Inc()
	m.vapLatency.WithLabelValues(policy, binding, et, action).Observe(d.elapsed.Seconds())
}

// observeMutation counts one MutatingAdmissionPolicy mutation.
func (m *Metrics) observeMutation(policy, binding string, elapsed time.Duration, err error) {
	if m == nil {
		return
	}
	et := "no_error"
	if err != nil {
		et = errorType(err.Error())
	}
	m.mapCheck.WithLabelValues(policy, binding, et).Inc()
	m.mapLatency.WithLabelValues(policy, binding, et).Observe(elapsed.Seconds())
}

// conditionMetrics records a policy's matchConditions in the metrics
// policies share with webhooks. Upstream compiles the matcher of both
// policy kinds with kind "policy" and type "validate", and counts no
// exclusions for policies.
type conditionMetrics struct {
	m    *admission.Metrics
	name string
}

func (c conditionMetrics) observe(res admcel.MatchResult, a *admission.Attributes) {
	if c.m == nil || a == nil {
		return
	}
	res.Observe(c.m, c.name, "policy", "validate", a.Operation)
}
