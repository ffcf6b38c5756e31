package tainteviction

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are upstream's two metrics of the controller
// (pkg/controller/tainteviction/metrics), with their names, help texts and
// buckets: the pods it deleted, and how long after their deletion fell
// due each was deleted.
type Metrics struct {
	deletions prometheus.Counter
	latency   prometheus.Histogram
}

// NewMetrics returns the metrics, not yet served.
func NewMetrics() *Metrics {
	return &Metrics{
		deletions: prometheus.NewCounter(prometheus.CounterOpts{Name: "taint_eviction_controller_pod_deletions_total",
			Help: "[ALPHA] Total number of Pods deleted by TaintEvictionController since its start."}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "taint_eviction_controller_pod_deletion_duration_seconds",
			Help: "[ALPHA] Latency, in seconds, between the time when a taint effect has been activated for the Pod and its deletion via TaintEvictionController.",
			// 5 ms to 4 min
			Buckets: []float64{0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 60, 120, 180, 240}}),
	}
}

// Register serves the metrics on reg; registering them again (the
// controller restarted under leader election) is not an error.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.deletions, m.latency} {
		if err := reg.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return err
		}
	}
	return nil
}

// deleted counts a pod deleted late seconds after its deletion fell due.
// A nil m counts nothing.
func (m *Metrics) deleted(late time.Duration) {
	if m == nil {
		return
	}
	m.deletions.Inc()
	m.latency.Observe(late.Seconds())
}
