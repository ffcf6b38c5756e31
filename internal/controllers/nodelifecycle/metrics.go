package nodelifecycle

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are upstream's node_collector families
// (pkg/controller/nodelifecycle/metrics.go), with their names, labels,
// buckets and help texts.
type Metrics struct {
	zoneHealth, zoneSize, unhealthyNodes *prometheus.GaugeVec
	evictions                            *prometheus.CounterVec
	nodeHealthUpdate, allNodesUpdate     prometheus.Histogram
}

// NewMetrics returns the families, not yet served.
func NewMetrics() *Metrics {
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "node_collector", Name: name, Help: "[ALPHA] " + help}, []string{"zone"})
	}
	histogram := func(name, help string, start float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: "node_collector", Name: name, Help: "[ALPHA] " + help,
			Buckets: prometheus.ExponentialBuckets(start, 4, 8)})
	}
	return &Metrics{
		zoneHealth:     gauge("zone_health", "Gauge measuring percentage of healthy nodes per zone."),
		zoneSize:       gauge("zone_size", "Gauge measuring number of registered Nodes per zones."),
		unhealthyNodes: gauge("unhealthy_nodes_in_zone", "Gauge measuring number of not Ready Nodes per zones."),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "node_collector", Name: "evictions_total",
			Help: "[STABLE] Number of Node evictions that happened since current instance of NodeController started."}, []string{"zone"}),
		nodeHealthUpdate: histogram("update_node_health_duration_seconds", "Duration in seconds for NodeController to update the health of a single node.", 0.001),
		allNodesUpdate:   histogram("update_all_nodes_health_duration_seconds", "Duration in seconds for NodeController to update the health of all nodes.", 0.01),
	}
}

// Register serves the families on reg; registering them again is not an
// error.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.zoneHealth, m.zoneSize, m.unhealthyNodes, m.evictions, m.nodeHealthUpdate, m.allNodesUpdate} {
		if err := reg.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return err
		}
	}
	return nil
}

// The recording methods do nothing on a nil m.

func (m *Metrics) zone(key string, size, unhealthy int) {
	if m == nil {
		return
	}
	m.zoneSize.WithLabelValues(key).Set(float64(size))
	health := 100.0
	if size > 0 {
		health = float64(100*(size-unhealthy)) / float64(size)
	}
	m.zoneHealth.WithLabelValues(key).Set(health)
	m.unhealthyNodes.WithLabelValues(key).Set(float64(unhealthy))
}

func (m *Metrics) evicted(key string, n float64) {
	if m != nil {
		m.evictions.WithLabelValues(key).Add(n)
	}
}

func (m *Metrics) nodeHealthTook(d time.Duration) {
	if m != nil {
		m.nodeHealthUpdate.Observe(d.Seconds())
	}
}

func (m *Metrics) allNodesTook(d time.Duration) {
	if m != nil {
		m.allNodesUpdate.Observe(d.Seconds())
	}
}
