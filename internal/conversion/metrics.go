package conversion

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The failure types of apiserver_conversion_webhook_request_total, as
// upstream's.
const (
	failureCall             = "conversion_webhook_call_failure"
	failureMalformed        = "conversion_webhook_malformed_response_failure"
	failurePartial          = "conversion_webhook_partial_response_failure"
	failureInvalidConverted = "conversion_webhook_invalid_converted_object_failure"
)

// Metrics are upstream's conversion webhook metrics:
// apiserver_conversion_webhook_request_total and
// apiserver_conversion_webhook_duration_seconds (per result and failure
// type), and apiserver_crd_conversion_webhook_duration_seconds (per
// definition and versions).
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	perCRD   *prometheus.HistogramVec
}

// NewMetrics creates the metrics and registers them with reg (none when
// reg is nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "apiserver", Name: "conversion_webhook_request_total",
			Help: "[ALPHA] Counter for conversion webhook requests with success/failure and failure error type"}, []string{"result", "failure_type"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "apiserver", Name: "conversion_webhook_duration_seconds",
			Help:    "[ALPHA] Conversion webhook request latency",
			Buckets: []float64{0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 45, 60}}, []string{"result", "failure_type"}),
		perCRD: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_crd_conversion_webhook_duration_seconds",
			Help: "[ALPHA] CRD webhook conversion duration in seconds", Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)},
			[]string{"crd_name", "from_version", "to_version", "succeeded"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.latency, m.perCRD)
	}
	return m
}

// observe records one webhook conversion; failureType is empty on success.
func (m *Metrics) observe(elapsed time.Duration, failureType string) {
	if m == nil {
		return
	}
	result := "success"
	if failureType != "" {
		result = "failure"
	}
	m.requests.WithLabelValues(result, failureType).Inc()
	m.latency.WithLabelValues(result, failureType).Observe(elapsed.Seconds())
}

// observeCRD records a conversion of crd's objects between two versions.
func (m *Metrics) observeCRD(crd, from, to string, elapsed time.Duration, err error) {
	if m == nil || from == to {
		return
	}
	m.perCRD.WithLabelValues(crd, from, to, strconv.FormatBool(err == nil)).Observe(elapsed.Seconds())
}
