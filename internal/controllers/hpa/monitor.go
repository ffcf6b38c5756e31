package hpa

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// Metrics are upstream's horizontal_pod_autoscaler_controller families
// (pkg/controller/podautoscaler/monitor), with their names, labels,
// buckets and help texts; stale_sync_skips_total counts the
// reconciliations put off until the autoscalers' cache sees the
// controller's last status write.
type Metrics struct {
	reconciliations, computations       *prometheus.CounterVec
	reconciliationTime, computationTime *prometheus.HistogramVec
	autoscalers                         prometheus.Gauge
	desired                             *prometheus.GaugeVec
	staleSkips                          *prometheus.CounterVec
}

const subsystem = "horizontal_pod_autoscaler_controller"

// NewMetrics returns the families, not yet served.
func NewMetrics() *Metrics {
	labelsHelp := "The label 'action' should be either 'scale_down', 'scale_up', or 'none'. Also, the label 'error' should be either 'spec', 'internal', or 'none'. Note that if both spec and internal errors happen during a reconciliation, the first one to occur is reported in `error` label."
	metricHelp := "The label 'action' should be either 'scale_down', 'scale_up', or 'none'. Also, the label 'error' should be either 'spec', 'internal', or 'none'. The label 'metric_type' corresponds to HPA.spec.metrics[*].type"
	metricDurationHelp := "The label 'action' should be either 'scale_down', 'scale_up', or 'none'. The label 'error' should be either 'spec', 'internal', or 'none'. The label 'metric_type' corresponds to HPA.spec.metrics[*].type"
	buckets := prometheus.ExponentialBuckets(0.001, 2, 15)
	return &Metrics{
		reconciliations: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: subsystem, Name: "reconciliations_total",
			Help: "[BETA] Number of reconciliations of HPA controller. " + labelsHelp}, []string{"action", "error"}),
		reconciliationTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: subsystem, Name: "reconciliation_duration_seconds",
			Help: "[BETA] The time(seconds) that the HPA controller takes to reconcile once. " + labelsHelp, Buckets: buckets}, []string{"action", "error"}),
		computations: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: subsystem, Name: "metric_computation_total",
			Help: "[BETA] Number of metric computations. " + metricHelp}, []string{"action", "error", "metric_type"}),
		computationTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: subsystem, Name: "metric_computation_duration_seconds",
			Help: "[BETA] The time(seconds) that the HPA controller takes to calculate one metric. " + metricDurationHelp, Buckets: buckets}, []string{"action", "error", "metric_type"}),
		autoscalers: prometheus.NewGauge(prometheus.GaugeOpts{Subsystem: subsystem, Name: "num_horizontal_pod_autoscalers",
			Help: "[ALPHA] Current number of controlled HPA objects."}),
		desired: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: subsystem, Name: "desired_replicas",
			Help: "[ALPHA] Current desired replica count for HPA objects."}, []string{"namespace", "hpa_name"}),
		staleSkips: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: subsystem, Name: "stale_sync_skips_total",
			Help: "[ALPHA] Total number of HPA syncs skipped due to a stale watch cache."}, []string{"group", "resource"}),
	}
}

// Register serves the families on reg; registering them again is not an
// error.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.reconciliations, m.reconciliationTime, m.computations, m.computationTime, m.autoscalers, m.desired, m.staleSkips} {
		if err := reg.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return err
		}
	}
	return nil
}

// The recording methods do nothing on a nil m.

func (m *Metrics) reconciled(action string, err error, took time.Duration) {
	if m == nil {
		return
	}
	m.reconciliations.WithLabelValues(action, errorLabel(err)).Inc()
	m.reconciliationTime.WithLabelValues(action, errorLabel(err)).Observe(took.Seconds())
}

// metricComputed counts one metric's computation: its action is the
// proposal's direction against the status's current replicas, none when
// it failed.
func (m *Metrics) metricComputed(h *autoscalingv2.HorizontalPodAutoscaler, proposed int32, err error, took time.Duration, typ autoscalingv2.MetricSourceType) {
	if m == nil {
		return
	}
	action := actionNone
	switch {
	case err != nil:
	case proposed > h.Status.CurrentReplicas:
		action = actionScaleUp
	case proposed < h.Status.CurrentReplicas:
		action = actionScaleDown
	}
	m.computations.WithLabelValues(action, errorLabel(err), string(typ)).Inc()
	m.computationTime.WithLabelValues(action, errorLabel(err), string(typ)).Observe(took.Seconds())
}

func (m *Metrics) autoscalerAdded() {
	if m != nil {
		m.autoscalers.Inc()
	}
}

func (m *Metrics) autoscalerDeleted() {
	if m != nil {
		m.autoscalers.Dec()
	}
}

func (m *Metrics) desiredReplicas(namespace, name string, n int32) {
	if m != nil {
		m.desired.WithLabelValues(namespace, name).Set(float64(n))
	}
}

func (m *Metrics) staleSkip() {
	if m != nil {
		m.staleSkips.WithLabelValues("autoscaling", "horizontalpodautoscalers").Inc()
	}
}
