package ephemeral

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are upstream's two counters of the controller's claim creates
// (pkg/controller/volume/ephemeral/metrics), with their names and help
// texts: every create asked of the API server, and those that failed.
type Metrics struct {
	creates, failures prometheus.Counter
}

// NewMetrics returns the counters, not yet served.
func NewMetrics() *Metrics {
	return &Metrics{
		creates: prometheus.NewCounter(prometheus.CounterOpts{Name: "ephemeral_volume_controller_create_total",
			Help: "[ALPHA] Number of PersistentVolumeClaim creation requests"}),
		// upstream's help text of the failures is the creates' own
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "ephemeral_volume_controller_create_failures_total",
			Help: "[ALPHA] Number of PersistentVolumeClaim creation requests"}),
	}
}

// Register serves the counters on reg; registering them again (the
// controller restarted under leader election) is not an error.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.creates, m.failures} {
		if err := reg.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return err
		}
	}
	return nil
}

// created counts one create asked of the API server, and whether it
// failed. A nil m counts nothing.
func (m *Metrics) created(err error) {
	if m == nil {
		return
	}
	m.creates.Inc()
	if err != nil {
		m.failures.Inc()
	}
}
