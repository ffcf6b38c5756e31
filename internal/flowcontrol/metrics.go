package flowcontrol

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are upstream's apiserver_flowcontrol_* series.
type metrics struct {
	c               *Controller
	flowsMu         sync.RWMutex
	flows           map[[2]string]*flowMetrics
	dispatchedTotal *prometheus.CounterVec
	rejectedTotal   *prometheus.CounterVec
	waitDuration    *prometheus.HistogramVec
	inQueue         *prometheus.GaugeVec
	executing       *prometheus.GaugeVec
	executingSeats  *prometheus.GaugeVec
	inQueueSeats    *prometheus.GaugeVec
	queueLength     *prometheus.HistogramVec
	executionTime   *prometheus.HistogramVec
	watchCount      *prometheus.HistogramVec
	estimatedSeats  *prometheus.HistogramVec
	noAccommodation *prometheus.CounterVec
	levels          *levelSeriesSet
}

// Upstream's buckets.
var (
	requestSecondsBuckets = []float64{0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30}
	queueLengthBuckets    = []float64{0, 10, 25, 50, 100, 250, 500, 1000}
)

func newMetrics(c *Controller) *metrics {
	labels := []string{"priority_level", "flow_schema"}
	return &metrics{
		c: c, levels: newLevelSeriesSet(c.serverLimit),
		dispatchedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_flowcontrol_dispatched_requests_total",
			Help: "[BETA] Number of requests executed by API Priority and Fairness subsystem"}, labels),
		rejectedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_flowcontrol_rejected_requests_total",
			Help: "[BETA] Number of requests rejected by API Priority and Fairness subsystem"}, append(labels, "reason")),
		waitDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_flowcontrol_request_wait_duration_seconds",
			Help:    "[BETA] Length of time a request spent waiting in its queue",
			Buckets: requestSecondsBuckets}, append(labels, "execute")),
		inQueue: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_current_inqueue_requests",
			Help: "[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem"}, labels),
		executing: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_current_executing_requests",
			Help: "[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem"}, labels),
		executingSeats: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_current_executing_seats",
			Help: "[BETA] Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem"}, labels),
		inQueueSeats: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_flowcontrol_current_inqueue_seats",
			Help: "[ALPHA] Number of seats currently pending in queues of the API Priority and Fairness subsystem"}, labels),
		queueLength: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_flowcontrol_request_queue_length_after_enqueue",
			Help:    "[ALPHA] Length of queue in the API Priority and Fairness subsystem, as seen by each request after it is enqueued",
			Buckets: queueLengthBuckets}, labels),
		executionTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_flowcontrol_request_execution_seconds",
			Help:    "[ALPHA] Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the API Priority and Fairness subsystem",
			Buckets: requestSecondsBuckets}, append(labels, "type")),
		watchCount: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_flowcontrol_watch_count_samples",
			Help:    "[ALPHA] count of watchers for mutating requests in API Priority and Fairness",
			Buckets: []float64{0, 1, 10, 100, 1000, 10000}}, labels),
		estimatedSeats: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_flowcontrol_work_estimated_seats",
			Help:    "[ALPHA] Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 100}}, labels),
		noAccommodation: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_flowcontrol_request_dispatch_no_accommodation_total",
			Help: "[ALPHA] Number of times a dispatch attempt resulted in a non accommodation due to lack of available seats"}, labels),
	}
}

// Register adds the flow-control series to reg.
func (c *Controller) Register(reg prometheus.Registerer) {
	m := c.metrics
	reg.MustRegister(m.dispatchedTotal, m.rejectedTotal, m.waitDuration, m.inQueue, m.executing, m.executingSeats,
		m.inQueueSeats, m.queueLength, m.executionTime, m.watchCount, m.estimatedSeats, m.noAccommodation, &levelCollector{c: c})
	reg.MustRegister(m.levels.collectors()...)
}

// flowMetrics are the series of one priority level and flow schema.
type flowMetrics struct {
	dispatched     prometheus.Counter
	waitedServed   prometheus.Observer
	waitedRefused  prometheus.Observer
	inQueue        prometheus.Gauge
	inQueueSeats   prometheus.Gauge
	executing      prometheus.Gauge
	executingSeats prometheus.Gauge
	queueLengths   prometheus.Observer
	estimatedSeats prometheus.Observer
	// series made on their first observation, as upstream makes them:
	// a flow that never sees one has none
	watchersCounted, executedRegular, executedWatch *lazyObserver
	m                                               *metrics
	labels                                          [2]string
}

// lazyObserver is a series of a vector, looked up when first observed and
// kept.
type lazyObserver struct {
	vec    *prometheus.HistogramVec
	labels []string
	series atomic.Pointer[prometheus.Observer]
}

func (l *lazyObserver) Observe(v float64) {
	o := l.series.Load()
	if o == nil {
		series := l.vec.WithLabelValues(l.labels...)
		o = &series
		l.series.Store(o)
	}
	(*o).Observe(v)
}

// forFlow returns cl's series, made once per level and schema.
func (m *metrics) forFlow(cl *Classification) *flowMetrics {
	k := [2]string{cl.PriorityLevel, cl.FlowSchema}
	m.flowsMu.RLock()
	f := m.flows[k]
	m.flowsMu.RUnlock()
	if f != nil {
		return f
	}
	m.flowsMu.Lock()
	defer m.flowsMu.Unlock()
	if f = m.flows[k]; f != nil {
		return f
	}
	f = &flowMetrics{m: m, labels: k,
		dispatched:     m.dispatchedTotal.WithLabelValues(k[0], k[1]),
		waitedServed:   m.waitDuration.WithLabelValues(k[0], k[1], "true"),
		waitedRefused:  m.waitDuration.WithLabelValues(k[0], k[1], "false"),
		inQueue:        m.inQueue.WithLabelValues(k[0], k[1]),
		inQueueSeats:   m.inQueueSeats.WithLabelValues(k[0], k[1]),
		executing:      m.executing.WithLabelValues(k[0], k[1]),
		executingSeats: m.executingSeats.WithLabelValues(k[0], k[1]),
		queueLengths:   m.queueLength.WithLabelValues(k[0], k[1]),
		estimatedSeats: m.estimatedSeats.WithLabelValues(k[0], k[1]),

		watchersCounted: &lazyObserver{vec: m.watchCount, labels: []string{k[0], k[1]}},
		executedRegular: &lazyObserver{vec: m.executionTime, labels: []string{k[0], k[1], "regular"}},
		executedWatch:   &lazyObserver{vec: m.executionTime, labels: []string{k[0], k[1], "watch"}},
	}
	if m.flows == nil {
		m.flows = map[[2]string]*flowMetrics{}
	}
	m.flows[k] = f
	return f
}

func (f *flowMetrics) rejected(reason string, waited time.Duration) {
	f.m.rejectedTotal.WithLabelValues(f.labels[0], f.labels[1], reason).Inc()
	f.waitedRefused.Observe(waited.Seconds())
}

func (f *flowMetrics) executingStart(seats int, verb string) {
	f.executing.Inc()
	f.executingSeats.Add(float64(seats))
	f.m.levels.readWrite.add(phaseExecuting, readOnlyVerb(verb), 1)
}

// requestsWaiting counts a request of verb into (delta 1) or out of
// (delta -1) a queue.
func (f *flowMetrics) requestsWaiting(verb string, delta int) {
	if f == nil {
		return
	}
	readOnly := readOnlyVerb(verb)
	f.m.levels.readWrite.add(phaseWaiting, readOnly, delta)
	if note := f.m.c.queueNote; note != nil {
		note(readOnly, delta)
	}
}

// readOnlyVerb: the verbs upstream counts as read-only requests.
func readOnlyVerb(verb string) bool { return verb == "get" || verb == "list" || verb == "watch" }

// executingDone ends a request's execution (a watch's initialization):
// its seats are given back apart (seatsReleased), after any linger.
func (f *flowMetrics) executingDone(took time.Duration, watch bool, verb string) {
	f.executing.Dec()
	f.m.levels.readWrite.add(phaseExecuting, readOnlyVerb(verb), -1)
	if watch {
		f.executedWatch.Observe(took.Seconds())
	} else {
		f.executedRegular.Observe(took.Seconds())
	}
}

func (f *flowMetrics) seatsReleased(seats int) {
	if f != nil {
		f.executingSeats.Sub(float64(seats))
	}
}

func (f *flowMetrics) queued(delta, seats int) {
	if f != nil {
		f.inQueue.Add(float64(delta))
		f.inQueueSeats.Add(float64(seats))
	}
}

func (f *flowMetrics) queueLength(n int) {
	if f != nil {
		f.queueLengths.Observe(float64(n))
	}
}

func (f *flowMetrics) noAccommodation() {
	if f != nil {
		f.m.noAccommodation.WithLabelValues(f.labels[0], f.labels[1]).Inc()
	}
}

func (f *flowMetrics) watchersSampled(n int) {
	f.watchersCounted.Observe(float64(n))
}

var (
	nominalLimitDesc = prometheus.NewDesc("apiserver_flowcontrol_nominal_limit_seats",
		"[BETA] Nominal number of execution seats configured for each priority level", []string{"priority_level"}, nil)
	currentLimitDesc = prometheus.NewDesc("apiserver_flowcontrol_current_limit_seats",
		"[ALPHA] current derived number of execution seats available to each priority level", []string{"priority_level"}, nil)
	lowerLimitDesc = prometheus.NewDesc("apiserver_flowcontrol_lower_limit_seats",
		"[ALPHA] Configured lower bound on number of execution seats available to each priority level", []string{"priority_level"}, nil)
	upperLimitDesc = prometheus.NewDesc("apiserver_flowcontrol_upper_limit_seats",
		"[ALPHA] Configured upper bound on number of execution seats available to each priority level", []string{"priority_level"}, nil)
	demandHighWatermarkDesc = prometheus.NewDesc("apiserver_flowcontrol_demand_seats_high_watermark",
		"[ALPHA] High watermark, over last adjustment period, of demand_seats", []string{"priority_level"}, nil)
	demandAverageDesc = prometheus.NewDesc("apiserver_flowcontrol_demand_seats_average",
		"[ALPHA] Time-weighted average, over last adjustment period, of demand_seats", []string{"priority_level"}, nil)
	demandStdDevDesc = prometheus.NewDesc("apiserver_flowcontrol_demand_seats_stdev",
		"[ALPHA] Time-weighted standard deviation, over last adjustment period, of demand_seats", []string{"priority_level"}, nil)
	demandSmoothedDesc = prometheus.NewDesc("apiserver_flowcontrol_demand_seats_smoothed",
		"[ALPHA] Smoothed seat demands", []string{"priority_level"}, nil)
	targetSeatsDesc = prometheus.NewDesc("apiserver_flowcontrol_target_seats",
		"[ALPHA] Seat allocation targets", []string{"priority_level"}, nil)
	fairFracDesc = prometheus.NewDesc("apiserver_flowcontrol_seat_fair_frac",
		"[ALPHA] Fair fraction of server's concurrency to allocate to each priority level that can use it", nil, nil)
)

// levelCollector reports each level's limits when scraped.
type levelCollector struct{ c *Controller }

func (l *levelCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- nominalLimitDesc
	ch <- currentLimitDesc
	ch <- lowerLimitDesc
	ch <- upperLimitDesc
	for _, d := range []*prometheus.Desc{demandHighWatermarkDesc, demandAverageDesc, demandStdDevDesc, demandSmoothedDesc, targetSeatsDesc, fairFracDesc} {
		ch <- d
	}
}

func (l *levelCollector) Collect(ch chan<- prometheus.Metric) {
	l.c.mu.RLock()
	defer l.c.mu.RUnlock()
	for name, lv := range l.c.levels {
		ch <- prometheus.MustNewConstMetric(nominalLimitDesc, prometheus.GaugeValue, float64(lv.nominal), name)
		ch <- prometheus.MustNewConstMetric(currentLimitDesc, prometheus.GaugeValue, float64(lv.current), name)
		ch <- prometheus.MustNewConstMetric(lowerLimitDesc, prometheus.GaugeValue, float64(lv.minimum), name)
		ch <- prometheus.MustNewConstMetric(upperLimitDesc, prometheus.GaugeValue, float64(lv.maximum), name)
		ch <- prometheus.MustNewConstMetric(demandHighWatermarkDesc, prometheus.GaugeValue, lv.peak, name)
		ch <- prometheus.MustNewConstMetric(demandAverageDesc, prometheus.GaugeValue, lv.demandAvg, name)
		ch <- prometheus.MustNewConstMetric(demandStdDevDesc, prometheus.GaugeValue, lv.demandStdDev, name)
		ch <- prometheus.MustNewConstMetric(demandSmoothedDesc, prometheus.GaugeValue, lv.smoothed, name)
		ch <- prometheus.MustNewConstMetric(targetSeatsDesc, prometheus.GaugeValue, lv.target, name)
	}
	ch <- prometheus.MustNewConstMetric(fairFracDesc, prometheus.GaugeValue, l.c.fairFrac)
}
