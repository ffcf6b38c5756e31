package node

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics is upstream's node_authorizer_graph_actions_duration_seconds,
// with its label and buckets: the time of each graph change, labeled by
// operation (AddPod, DeletePod, AddPV, DeletePV, AddVolumeAttachment, ...).
// Changes that the event methods skip, as upstream's informer handlers do,
// are not observed. A nil *Metrics records nothing.
type Metrics struct {
	actions *prometheus.HistogramVec
}

// NewMetrics creates the metrics and registers them with reg (when not
// nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{actions: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: "node_authorizer",
		Name:      "graph_actions_duration_seconds",
		Help:      "[ALPHA] Histogram of duration of graph actions in node authorizer.",
		// 0.1ms to about 200ms.
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 12),
	}, []string{"operation"})}
	if reg != nil {
		reg.MustRegister(m.actions)
	}
	return m
}

// observe records an operation that started at start; call it deferred.
func (m *Metrics) observe(operation string, start time.Time) {
	if m == nil {
		return
	}
	m.actions.WithLabelValues(operation).Observe(time.Since(start).Seconds())
}
