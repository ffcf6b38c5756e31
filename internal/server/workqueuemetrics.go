package server

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// workqueueBuckets are upstream's buckets of the workqueue durations:
// 10 ns to 10 s by tens.
var workqueueBuckets = prometheus.ExponentialBuckets(10e-9, 10, 10)

// workqueueMetrics are kube-controller-manager's workqueue_* families, by
// queue name, as component-base's workqueue provider registers them.
// client-go takes one provider per process (workqueue.SetProvider), so
// they are the process's: every server of the process serves the same
// series, those of its named queues (an unnamed queue counts nothing, as
// upstream's).
var workqueueMetrics = struct {
	depth, unfinished, longestRunning *prometheus.GaugeVec
	adds, retries                     *prometheus.CounterVec
	latency, workDuration             *prometheus.HistogramVec
}{
	depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_depth",
		Help: "[BETA] Current depth of workqueue"}, []string{"name"}),
	adds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_adds_total",
		Help: "[BETA] Total number of adds handled by workqueue"}, []string{"name"}),
	latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_queue_duration_seconds",
		Help: "[BETA] How long in seconds an item stays in workqueue before being requested.", Buckets: workqueueBuckets}, []string{"name"}),
	workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_work_duration_seconds",
		Help: "[BETA] How long in seconds processing an item from workqueue takes.", Buckets: workqueueBuckets}, []string{"name"}),
	unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_unfinished_work_seconds",
		Help: "[BETA] How many seconds of work has done that is in progress and hasn't been observed by work_duration. " +
			"Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases."},
		[]string{"name"}),
	longestRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_longest_running_processor_seconds",
		Help: "[BETA] How many seconds has the longest running processor for workqueue been running."}, []string{"name"}),
	retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_retries_total",
		Help: "[BETA] Total number of retries handled by workqueue"}, []string{"name"}),
}

var setWorkqueueProvider sync.Once

// registerWorkqueueMetrics serves the workqueue families on reg, and makes
// them client-go's provider for the queues made from now on.
func registerWorkqueueMetrics(reg prometheus.Registerer) {
	setWorkqueueProvider.Do(func() { workqueue.SetProvider(workqueueProvider{}) })
	m := workqueueMetrics
	reg.MustRegister(m.depth, m.adds, m.latency, m.workDuration, m.unfinished, m.longestRunning, m.retries)
}

// workqueueProvider hands client-go each queue's series.
type workqueueProvider struct{}

func (workqueueProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return workqueueMetrics.depth.WithLabelValues(name)
}

func (workqueueProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return workqueueMetrics.adds.WithLabelValues(name)
}

func (workqueueProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return workqueueMetrics.latency.WithLabelValues(name)
}

func (workqueueProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return workqueueMetrics.workDuration.WithLabelValues(name)
}

func (workqueueProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return workqueueMetrics.unfinished.WithLabelValues(name)
}

func (workqueueProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return workqueueMetrics.longestRunning.WithLabelValues(name)
}

func (workqueueProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return workqueueMetrics.retries.WithLabelValues(name)
}
