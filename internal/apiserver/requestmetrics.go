package apiserver

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RequestMetrics are kube-apiserver's per-request series:
// apiserver_request_total, apiserver_request_duration_seconds,
// apiserver_request_sli_duration_seconds, apiserver_response_sizes,
// apiserver_selfrequest_total, apiserver_request_terminations_total,
// apiserver_longrunning_requests, apiserver_current_inflight_requests,
// apiserver_current_inqueue_requests, apiserver_request_body_size_bytes,
// apiserver_watch_events_total, apiserver_watch_events_sizes and the
// apiserver_storage_list_* families, with upstream's names, help texts
// (with component-base's stability prefix), labels and buckets. The series
// of each label set are looked up once and kept, so that recording a
// request allocates nothing. It is not the flow-control or admission
// series.
type RequestMetrics struct {
	total        *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	sli          *prometheus.HistogramVec
	sizes        *prometheus.HistogramVec
	self         *prometheus.CounterVec
	terminations *prometheus.CounterVec
	longRunning  *prometheus.GaugeVec
	inflight     *prometheus.GaugeVec
	inqueue      *prometheus.GaugeVec
	bodies       *bodySizes
	watches      *watchEvents
	storageLists *storageLists

	marks, queued                      requestMarks
	inflightReadOnly, inflightMutating prometheus.Gauge
	inqueueReadOnly, inqueueMutating   prometheus.Gauge

	// series are the series of each finished request's label set, code
	// and kind; terminated those of refused and timed-out requests.
	series     seriesMap[seriesKey, requestSeries]
	terminated seriesMap[codedLabels, prometheus.Counter]
	// gauges are the long-running series (mu guards them).
	mu     sync.Mutex
	gauges map[RequestLabels]prometheus.Gauge
}

// requestSeries are the series one finished request counts in; the
// optional ones are nil when upstream does not record the request there.
type requestSeries struct {
	total    prometheus.Counter
	duration prometheus.Observer // nil for a refused request
	sli      prometheus.Observer // nil for a dry run, a watch or a refused request
	size     prometheus.Observer // nil but for upstream's GET and LIST routes
	self     prometheus.Counter  // nil but for the server's own requests
}

type codedLabels struct {
	RequestLabels
	code int
}

// seriesKey is a finished request's labels and code, and which of the
// optional series it counts in.
type seriesKey struct {
	codedLabels
	kind requestKind
}

// requestKind says which of the optional series a finished request counts
// in, as upstream's MonitorRequest and RecordDroppedRequest decide.
type requestKind struct {
	// Dropped: refused by flow control (in apiserver_request_total only).
	Dropped bool
	// SLI: neither a dry run nor a watch (upstream tracks no latencies of
	// a watch).
	SLI bool
	// Sized: served by one of upstream's GET or LIST routes.
	Sized bool
	// Self: made by the server's own loopback user, system:apiserver.
	Self bool
}

// Upstream's buckets: the durations' chosen for its latency SLOs, the
// SLI's the same from 50ms, the sizes' 1KB to 1GB by tens.
var (
	requestDurationBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
		4, 5, 6, 8, 10, 15, 20, 30, 45, 60}
	requestSLIBuckets = []float64{0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
		4, 5, 6, 8, 10, 15, 20, 30, 45, 60}
	responseSizeBuckets = prometheus.ExponentialBuckets(1000, 10, 7)
)

// Label names of the series, in upstream's order.
var (
	requestLabelNames     = []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}
	longRunningLabelNames = []string{"verb", "group", "version", "resource", "subresource", "scope", "component"}
)

// NewRequestMetrics makes the series and registers them with reg.
func NewRequestMetrics(reg prometheus.Registerer) *RequestMetrics {
	m := &RequestMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_request_total",
			Help: "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code."},
			append(requestLabelNames, "code")),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_request_duration_seconds",
			Help:    "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: requestDurationBuckets},
			requestLabelNames),
		sli: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_request_sli_duration_seconds",
			Help:    "[ALPHA] Response latency distribution (not counting webhook duration and priority & fairness queue wait times) in seconds for each verb, group, version, resource, subresource, scope and component.",
			Buckets: requestSLIBuckets},
			longRunningLabelNames),
		sizes: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_response_sizes",
			Help:    "[STABLE] Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.",
			Buckets: responseSizeBuckets},
			longRunningLabelNames),
		self: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_selfrequest_total",
			Help: "[ALPHA] Counter of apiserver self-requests broken out for each verb, API resource and subresource."},
			[]string{"verb", "group", "resource", "subresource"}),
		terminations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_request_terminations_total",
			Help: "[ALPHA] Number of requests which apiserver terminated in self-defense."},
			append(longRunningLabelNames, "code")),
		longRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_longrunning_requests",
			Help: "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way."},
			longRunningLabelNames),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_current_inflight_requests",
			Help: "[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second."},
			[]string{"request_kind"}),
		inqueue: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_current_inqueue_requests",
			Help: "[ALPHA] Maximal number of queued requests in this apiserver per request kind in last second."},
			[]string{"request_kind"}),
		bodies: newBodySizes(), watches: newWatchEvents(), storageLists: newStorageLists(),
		gauges: map[RequestLabels]prometheus.Gauge{},
	}
	m.inflightReadOnly, m.inflightMutating = m.inflight.WithLabelValues("readOnly"), m.inflight.WithLabelValues("mutating")
	reg.MustRegister(m.total, m.duration, m.sli, m.sizes, m.self, m.terminations, m.longRunning, m.inflight, m.inqueue, m.bodies.vec,
		m.watches.total, m.watches.sizes)
	reg.MustRegister(m.storageLists.collectors()...)
	return m
}

// FinishedRequest is what the series record of a request that ended.
type FinishedRequest struct {
	Code int
	// Took is the request's whole time; Excluded the part of it the SLI
	// duration leaves out, as upstream's latency trackers: the calls of
	// admission webhooks (the mutating ones added up, the longest
	// validating one; each the round trip and decoding of the answer, as
	// admission.Record notes them) and the wait in an APF queue. admitd
	// times each of these apart, so nothing upstream leaves out is left in;
	// like upstream it does not leave out conversion or authorization
	// webhooks, nor CEL policies.
	Took, Excluded time.Duration
	// Size is the bytes of the response's body.
	Size int64
}

// observe records a finished request in the series of k.
func (m *RequestMetrics) observe(k seriesKey, f FinishedRequest) {
	rs := m.series.get(k, m.newSeries)
	rs.total.Inc()
	if rs.duration != nil {
		rs.duration.Observe(f.Took.Seconds())
	}
	if rs.sli != nil {
		rs.sli.Observe((f.Took - f.Excluded).Seconds())
	}
	if rs.size != nil {
		rs.size.Observe(float64(f.Size))
	}
	if rs.self != nil {
		rs.self.Inc()
	}
}

// newSeries makes the series of k.
func (m *RequestMetrics) newSeries(k seriesKey) requestSeries {
	l := k.RequestLabels
	rs := requestSeries{total: m.total.WithLabelValues(l.Verb, l.DryRun, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component, strconv.Itoa(k.code))}
	if k.kind.Dropped {
		return rs
	}
	rs.duration = m.duration.WithLabelValues(l.Verb, l.DryRun, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component)
	if k.kind.SLI {
		rs.sli = m.sli.WithLabelValues(l.Verb, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component)
	}
	if k.kind.Sized {
		rs.size = m.sizes.WithLabelValues(l.Verb, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component)
	}
	if k.kind.Self {
		rs.self = m.self.WithLabelValues(l.Verb, l.Group, l.Resource, l.Subresource)
	}
	return rs
}

// terminate counts a request the server ended itself (a refusal by flow
// control or the in-flight limit, a timeout) with the code it answered.
func (m *RequestMetrics) terminate(r *http.Request, info *requestInfo, code int) {
	m.terminateBy(r, info, requestComponent, code)
}

// terminateBy counts a request component ended itself: the server's API
// handlers ("apiserver") or the aggregation layer's proxy ("aggregator").
func (m *RequestMetrics) terminateBy(r *http.Request, info *requestInfo, component string, code int) {
	l := longRunningMetricLabels(r, info)
	l.Component = component
	m.terminated.get(codedLabels{l, code}, m.newTermination).Inc()
}

func (m *RequestMetrics) newTermination(k codedLabels) prometheus.Counter {
	l := k.RequestLabels
	return m.terminations.WithLabelValues(l.Verb, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component, strconv.Itoa(k.code))
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
func (s *Server) recordRequestMetrics(rq *request, rec *statusRecorder) {
	m := s.cfg.RequestMetrics
	if m == nil || !rq.metered {
		return
	}
	r, info := rq.event.HTTPRequest, rq.info
	f := FinishedRequest{Code: rq.event.Code, Took: rq.event.Finished.Sub(rq.event.Started), Size: rec.written,
		Excluded: rq.record.WebhookTime() + rq.flow.Waited}
	if rq.dropped {
		m.observe(seriesKey{codedLabels{droppedRequestLabels(r, info), f.Code}, requestKind{Dropped: true}}, f)
		return
	}
	m.observe(seriesKey{codedLabels{requestMetricLabels(r, info), f.Code}, finishedKind(r, info, rq.user.Username)}, f)
}

// RecordRequest records a finished request r of user (as the server
// records it once r has run, or once flow control has refused it when
// dropped); exported for the differential test against upstream.
func (m *RequestMetrics) RecordRequest(r *http.Request, user string, dropped bool, f FinishedRequest) {
	info := parseRequestInfo(r)
	if dropped {
		m.observe(seriesKey{codedLabels{droppedRequestLabels(r, info), f.Code}, requestKind{Dropped: true}}, f)
		return
	}
	m.observe(seriesKey{codedLabels{requestMetricLabels(r, info), f.Code}, finishedKind(r, info, user)}, f)
}

// RecordTermination counts r as a request component ended with code, as
// the server does; exported for the differential test against upstream.
func (m *RequestMetrics) RecordTermination(r *http.Request, component string, code int) {
	m.terminateBy(r, parseRequestInfo(r), component, code)
}
