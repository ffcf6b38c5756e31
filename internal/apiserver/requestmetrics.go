package apiserver

import (
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RequestMetrics are kube-apiserver's per-request series:
// apiserver_request_total, apiserver_request_duration_seconds,
// apiserver_longrunning_requests and apiserver_current_inflight_requests,
// with upstream's names, help texts (with component-base's stability
// prefix), labels and buckets. The series of
// each label set are looked up once and kept, so that recording a request
// allocates nothing. It is not the flow-control or admission series.
type RequestMetrics struct {
	total       *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	longRunning *prometheus.GaugeVec
	inflight    *prometheus.GaugeVec

	marks                              executingMarks
	inflightReadOnly, inflightMutating prometheus.Gauge

	// series maps each label set and code seen to its counter and
	// observer; it is replaced, never changed, so that lookups take no
	// lock (mu orders the writers). gauges are the long-running series.
	series atomic.Pointer[map[codedLabels]requestSeries]
	mu     sync.Mutex
	gauges map[RequestLabels]prometheus.Gauge
}

type requestSeries struct {
	total    prometheus.Counter
	duration prometheus.Observer
}

type codedLabels struct {
	RequestLabels
	code int
}

// requestDurationBuckets are upstream's, chosen for its latency SLOs.
var requestDurationBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
	4, 5, 6, 8, 10, 15, 20, 30, 45, 60}

// NewRequestMetrics makes the series and registers them with reg.
func NewRequestMetrics(reg prometheus.Registerer) *RequestMetrics {
	m := &RequestMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_request_total",
			Help: "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code."},
			[]string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_request_duration_seconds",
			Help:    "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: requestDurationBuckets},
			[]string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}),
		longRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_longrunning_requests",
			Help: "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way."},
			[]string{"verb", "group", "version", "resource", "subresource", "scope", "component"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_current_inflight_requests",
			Help: "[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second."},
			[]string{"request_kind"}),
		gauges: map[RequestLabels]prometheus.Gauge{},
	}
	m.inflightReadOnly, m.inflightMutating = m.inflight.WithLabelValues("readOnly"), m.inflight.WithLabelValues("mutating")
	m.series.Store(&map[codedLabels]requestSeries{})
	reg.MustRegister(m.total, m.duration, m.longRunning, m.inflight)
	return m
}

// Observe records one finished request with labels l and response code.
func (m *RequestMetrics) Observe(l RequestLabels, code int, took time.Duration) {
	k := codedLabels{l, code}
	rs, ok := (*m.series.Load())[k]
	if !ok {
		rs = m.addSeries(k)
	}
	rs.total.Inc()
	rs.duration.Observe(took.Seconds())
}

// addSeries makes k's series and publishes a copy of the map with them.
func (m *RequestMetrics) addSeries(k codedLabels) requestSeries {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.series.Load()
	if rs, ok := old[k]; ok {
		return rs
	}
	l := k.RequestLabels
	rs := requestSeries{
		total:    m.total.WithLabelValues(l.Verb, l.DryRun, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component, strconv.Itoa(k.code)),
		duration: m.duration.WithLabelValues(l.Verb, l.DryRun, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component),
	}
	next := make(map[codedLabels]requestSeries, len(old)+1)
	maps.Copy(next, old)
	next[k] = rs
	m.series.Store(&next)
	return rs
}

// LongRunningStarted counts a long-running request (a watch, a connect)
// until the returned func is called. The gauge has no dry_run label.
func (m *RequestMetrics) LongRunningStarted(l RequestLabels) func() {
	l.DryRun = ""
	m.mu.Lock()
	g := m.gauges[l]
	if g == nil {
		g = m.longRunning.WithLabelValues(l.Verb, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component)
		m.gauges[l] = g
	}
	m.mu.Unlock()
	g.Inc()
	return g.Dec
}

// recordRequestMetrics counts a finished request in the per-request
// series when upstream would.
func (s *Server) recordRequestMetrics(rq *request) {
	m := s.cfg.RequestMetrics
	if m == nil || !rq.metered {
		return
	}
	r := rq.event.HTTPRequest
	var l RequestLabels
	if rq.dropped {
		l = droppedRequestLabels(r, rq.info)
	} else {
		l = requestMetricLabels(r, rq.info)
	}
	m.Observe(l, rq.event.Code, rq.event.Finished.Sub(rq.event.Started))
}
