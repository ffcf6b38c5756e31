package flowcontrol

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are upstream's apiserver_flowcontrol_* series.
type metrics struct {
	c               *Controller
	dispatchedTotal *prometheus.CounterVec
	rejectedTotal   *prometheus.CounterVec
	waitDuration    *prometheus.HistogramVec
	inQueue         *prometheus.GaugeVec
	executing       *prometheus.GaugeVec
	executingSeats  *prometheus.GaugeVec
}

func newMetrics(c *Controller) *metrics {
	labels := []string{"priority_level", "flow_schema"}
	return &metrics{
		c: c,
		dispatchedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_flowcontrol_dispatched_requests_total",
			Help: "Number of requests executed by API Priority and Fairness subsystem"}, labels),
		rejectedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_flowcontrol_rejected_requests_total",
			Help: "Number of requests rejected by API Priority and Fairness subsystem"}, append(labels, "reason")),
		waitDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_flowcontrol_request_wait_duration_seconds",
			Help:    "Length of time a request spent waiting in its queue",
			Buckets: []float64{0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30}}, append(labels, "execute")),
		inQueue: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_current_inqueue_requests",
			Help: "Number of requests currently pending in queues of the API Priority and Fairness subsystem"}, labels),
		executing: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_current_executing_requests",
			Help: "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem"}, labels),
		executingSeats: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_current_executing_seats",
			Help: "Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem"}, labels),
	}
}

// Register adds the flow-control series to reg.
func (c *Controller) Register(reg prometheus.Registerer) {
	m := c.metrics
	reg.MustRegister(m.dispatchedTotal, m.rejectedTotal, m.waitDuration, m.inQueue, m.executing, m.executingSeats, &levelCollector{c: c})
}

func (m *metrics) dispatched(cl Classification) {
	m.dispatchedTotal.WithLabelValues(cl.PriorityLevel, cl.FlowSchema).Inc()
}

func (m *metrics) rejected(cl Classification, reason string, waited time.Duration) {
	m.rejectedTotal.WithLabelValues(cl.PriorityLevel, cl.FlowSchema, reason).Inc()
	m.waitDuration.WithLabelValues(cl.PriorityLevel, cl.FlowSchema, "false").Observe(waited.Seconds())
}

func (m *metrics) waited(cl Classification, waited time.Duration) {
	m.waitDuration.WithLabelValues(cl.PriorityLevel, cl.FlowSchema, "true").Observe(waited.Seconds())
}

// executingDelta moves the executing gauges of cl by one request of seats.
func (m *metrics) executingDelta(cl Classification, seats int, sign float64) {
	m.executing.WithLabelValues(cl.PriorityLevel, cl.FlowSchema).Add(sign)
	m.executingSeats.WithLabelValues(cl.PriorityLevel, cl.FlowSchema).Add(sign * float64(seats))
}

func (m *metrics) queuedDelta(cl Classification, delta int) {
	m.inQueue.WithLabelValues(cl.PriorityLevel, cl.FlowSchema).Add(float64(delta))
}

var (
	nominalLimitDesc = prometheus.NewDesc("apiserver_flowcontrol_nominal_limit_seats",
		"Nominal number of execution seats configured for each priority level", []string{"priority_level"}, nil)
	currentLimitDesc = prometheus.NewDesc("apiserver_flowcontrol_current_limit_seats",
		"current derived number of execution seats available to each priority level", []string{"priority_level"}, nil)
	lowerLimitDesc = prometheus.NewDesc("apiserver_flowcontrol_lower_limit_seats",
		"Configured lower bound on number of execution seats available to each priority level", []string{"priority_level"}, nil)
	upperLimitDesc = prometheus.NewDesc("apiserver_flowcontrol_upper_limit_seats",
		"Configured upper bound on number of execution seats available to each priority level", []string{"priority_level"}, nil)
)

// levelCollector reports each level's limits when scraped.
type levelCollector struct{ c *Controller }

func (l *levelCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- nominalLimitDesc
	ch <- currentLimitDesc
	ch <- lowerLimitDesc
	ch <- upperLimitDesc
}

func (l *levelCollector) Collect(ch chan<- prometheus.Metric) {
	l.c.mu.RLock()
	defer l.c.mu.RUnlock()
	for name, lv := range l.c.levels {
		ch <- prometheus.MustNewConstMetric(nominalLimitDesc, prometheus.GaugeValue, float64(lv.nominal), name)
		ch <- prometheus.MustNewConstMetric(currentLimitDesc, prometheus.GaugeValue, float64(lv.current), name)
		ch <- prometheus.MustNewConstMetric(lowerLimitDesc, prometheus.GaugeValue, float64(lv.minimum), name)
		ch <- prometheus.MustNewConstMetric(upperLimitDesc, prometheus.GaugeValue, float64(lv.maximum), name)
	}
}
