package admission

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the admission metrics of upstream (namespace apiserver,
// subsystem admission), with the same names, labels and buckets.
type Metrics struct {
	step          *prometheus.HistogramVec
	stepSummary   *prometheus.SummaryVec
	controller    *durationVec
	webhook       *prometheus.HistogramVec
	webhookTotal  *prometheus.CounterVec
	webhookReject *prometheus.CounterVec
	webhookOpen   *prometheus.CounterVec
	matchErrors   *prometheus.CounterVec
	matchExcluded *prometheus.CounterVec
	matchSeconds  *prometheus.HistogramVec
	reloads       *prometheus.CounterVec
	reloadTime    *prometheus.GaugeVec
	// stepSeries are the series of ObserveAdmissionStep by phase
	// (admit, validate), operation and outcome, found on first use.
	stepSeries [2][4][2]atomic.Pointer[stepObservers]
	// webhookSeries are the series of ObserveWebhook by webhookCall,
	// found on first use (a label lookup hashes every label each time).
	webhookSeries sync.Map
	// webhookSeriesCount is how many webhookSeries holds, at most
	// maxWebhookSeries; past that, calls look their series up each time.
	webhookSeriesCount atomic.Int32
}

// webhookCall is what tells one ObserveWebhook series pair from another.
type webhookCall struct {
	name, typ string
	op        Operation
	code      int
	rejected  bool
}

// webhookObservers are the duration and count series of one webhookCall.
type webhookObservers struct {
	duration prometheus.Observer
	total    prometheus.Counter
}

// maxWebhookSeries bounds the webhook series kept for reuse: webhooks come
// and go with their configurations, and a series of one that is gone is
// not looked up again.
const maxWebhookSeries = 4096

// stepObservers are the histogram and summary series of one admission
// phase, operation and outcome.
type stepObservers struct{ histogram, summary prometheus.Observer }

// NewMetrics creates the admission metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	opts := func(name, help string, buckets []float64) prometheus.HistogramOpts {
		return prometheus.HistogramOpts{Namespace: "apiserver", Subsystem: "admission", Name: name, Help: help, Buckets: buckets}
	}
	counter := func(name, help string) prometheus.CounterOpts {
		return prometheus.CounterOpts{Namespace: "apiserver", Subsystem: "admission", Name: name, Help: help}
	}
	short := []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5}
	m := &Metrics{
		step: prometheus.NewHistogramVec(opts("step_admission_duration_seconds",
			"[STABLE] Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).", short),
			[]string{"type", "operation", "rejected"}),
		stepSummary: prometheus.NewSummaryVec(prometheus.SummaryOpts{Namespace: "apiserver", Subsystem: "admission",
			Name: "step_admission_duration_seconds_summary", MaxAge: 5 * time.Hour,
			Help: "[ALPHA] Admission sub-step latency summary in seconds, broken out for each operation and API resource and step type (validate or admit)."},
			[]string{"type", "operation", "rejected"}),
		controller: newDurationVec(opts("controller_admission_duration_seconds",
			"[STABLE] Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).", short),
			[]string{"name", "type", "operation", "rejected"}),
		webhook: prometheus.NewHistogramVec(opts("webhook_admission_duration_seconds",
			"[STABLE] Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
			[]float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25}), []string{"name", "type", "operation", "rejected"}),
		webhookTotal: prometheus.NewCounterVec(counter("webhook_request_total",
			"[ALPHA] Admission webhook request total, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded."),
			[]string{"name", "type", "operation", "code", "rejected"}),
		webhookReject: prometheus.NewCounterVec(counter("webhook_rejection_count",
			"[ALPHA] Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded."),
			[]string{"name", "type", "operation", "error_type", "rejection_code"}),
		webhookOpen: prometheus.NewCounterVec(counter("webhook_fail_open_count",
			"[ALPHA] Admission webhook fail open count, identified by name and broken out for each admission type (validating or admit)."),
			[]string{"name", "type"}),
	}
	m.addMatchConditionMetrics()
	m.addManifestMetrics()
	if reg != nil {
		reg.MustRegister(m.step, m.stepSummary, m.controller, m.webhook, m.webhookTotal, m.webhookReject, m.webhookOpen,
			m.matchErrors, m.matchExcluded, m.matchSeconds, m.reloads, m.reloadTime)
	}
	return m
}

// ObserveAdmissionStep records one admission phase (type "admit" or
// "validate").
func (m *Metrics) ObserveAdmissionStep(d time.Duration, rejected bool, op Operation, typ string) {
	if m == nil {
		return
	}
	o := m.stepObservers(rejected, op, typ)
	o.histogram.Observe(d.Seconds())
	o.summary.Observe(d.Seconds())
}

// stepObservers returns the series of one phase, operation and outcome.
func (m *Metrics) stepObservers(rejected bool, op Operation, typ string) *stepObservers {
	find := func() *stepObservers {
		r := strconv.FormatBool(rejected)
		return &stepObservers{m.step.WithLabelValues(typ, string(op), r), m.stepSummary.WithLabelValues(typ, string(op), r)}
	}
	ph := 0
	switch typ {
	case "admit":
	case "validate":
		ph = 1
	default:
		return find()
	}
	rej := 0
	if rejected {
		rej = 1
	}
	slot := &m.stepSeries[ph][operationIndex(op)][rej]
	if o := slot.Load(); o != nil {
		return o
	}
	o := find()
	slot.Store(o)
	return o
}

// ObserveAdmissionController records one plugin call.
func (m *Metrics) ObserveAdmissionController(d time.Duration, rejected bool, op Operation, typ, name string) {
	if m == nil {
		return
	}
	m.controllerSeries(rejected, op, typ, name).observe(d)
}

// controllerSeries is the series of ObserveAdmissionController for one
// plugin, phase, operation and outcome.
func (m *Metrics) controllerSeries(rejected bool, op Operation, typ, name string) *durationSeries {
	return m.controller.with(name, typ, string(op), strconv.FormatBool(rejected))
}

// ObserveWebhook records one webhook call; typ is "admit" or "validating",
// code the HTTP or failure status code.
func (m *Metrics) ObserveWebhook(d time.Duration, rejected bool, op Operation, typ, name string, code int) {
	if m == nil {
		return
	}
	o := m.webhookObservers(webhookCall{name: name, typ: typ, op: op, code: capCode(code), rejected: rejected})
	o.duration.Observe(d.Seconds())
	o.total.Inc()
}

// webhookObservers returns the series of call, from webhookSeries when it
// is there.
func (m *Metrics) webhookObservers(call webhookCall) *webhookObservers {
	if o, ok := m.webhookSeries.Load(call); ok {
		return o.(*webhookObservers)
	}
	r := strconv.FormatBool(call.rejected)
	o := &webhookObservers{
		duration: m.webhook.WithLabelValues(call.name, call.typ, string(call.op), r),
		total:    m.webhookTotal.WithLabelValues(call.name, call.typ, string(call.op), strconv.Itoa(call.code), r),
	}
	if m.webhookSeriesCount.Load() < maxWebhookSeries {
		if _, loaded := m.webhookSeries.LoadOrStore(call, o); !loaded {
			m.webhookSeriesCount.Add(1)
		}
	}
	return o
}

// ObserveWebhookRejection counts a rejection caused by a webhook; errorType is
// calling_webhook_error, apiserver_internal_error or no_error.
func (m *Metrics) ObserveWebhookRejection(name, typ string, op Operation, errorType string, code int) {
	if m == nil {
		return
	}
	m.webhookReject.WithLabelValues(name, typ, string(op), errorType, strconv.Itoa(capCode(code))).Inc()
}

// ObserveWebhookFailOpen counts an ignored webhook failure.
func (m *Metrics) ObserveWebhookFailOpen(name, typ string) {
	if m == nil {
		return
	}
	m.webhookOpen.WithLabelValues(name, typ).Inc()
}

func capCode(code int) int {
	if code > 600 {
		return 600
	}
	return code
}

// matchConditionLabels are the labels of the match-condition metrics.
var matchConditionLabels = []string{"name", "kind", "type", "operation"}

func (m *Metrics) addMatchConditionMetrics() {
	m.matchErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "apiserver", Subsystem: "admission",
		Name: "match_condition_evaluation_errors_total",
		Help: "[ALPHA] Admission match condition evaluation errors count, identified by name of resource containing the match condition and broken out for each kind containing matchConditions (webhook or policy), operation and admission type (validate or admit)."},
		matchConditionLabels)
	m.matchExcluded = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "apiserver", Subsystem: "admission",
		Name: "match_condition_exclusions_total",
		Help: "[ALPHA] Admission match condition evaluation exclusions count, identified by name of resource containing the match condition and broken out for each kind containing matchConditions (webhook or policy), operation and admission type (validate or admit)."},
		matchConditionLabels)
	m.matchSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "apiserver", Subsystem: "admission",
		Name:    "match_condition_evaluation_seconds",
		Help:    "[ALPHA] Admission match condition evaluation time in seconds, identified by name and broken out for each kind containing matchConditions (webhook or policy), operation and type (validate or admit).",
		Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.1, 0.2, 0.25}},
		matchConditionLabels)
}

// ObserveMatchConditionEvalErrors adds n expressions of name's matchConditions
// that evaluated with an error; kind is "webhook" or "policy".
func (m *Metrics) ObserveMatchConditionEvalErrors(name, kind, typ string, op Operation, n int) {
	if m == nil || n == 0 {
		return
	}
	m.matchErrors.WithLabelValues(name, kind, typ, string(op)).Add(float64(n))
}

// ObserveMatchConditionExclusion counts a webhook or policy skipped by its
// matchConditions. As upstream, webhooks pass typ "admit" or "validate".
func (m *Metrics) ObserveMatchConditionExclusion(name, kind, typ string, op Operation) {
	if m == nil {
		return
	}
	m.matchExcluded.WithLabelValues(name, kind, typ, string(op)).Inc()
}

// ObserveMatchConditionEvaluationTime records the time matchConditions took;
// upstream observes it only when evaluation ends in a skip or an error.
func (m *Metrics) ObserveMatchConditionEvaluationTime(d time.Duration, name, kind, typ string, op Operation) {
	if m == nil {
		return
	}
	m.matchSeconds.WithLabelValues(name, kind, typ, string(op)).Observe(d.Seconds())
}

func (m *Metrics) addManifestMetrics() {
	labels := []string{"status", "plugin", "apiserver_id_hash"}
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "apiserver", Subsystem: "manifest_admission_config_controller",
		Name: "automatic_reloads_total",
		Help: "[ALPHA] Total number of automatic reloads of admission manifest configuration split by status, plugin, and apiserver identity."},
		labels)
	m.reloadTime = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "apiserver", Subsystem: "manifest_admission_config_controller",
		Name: "automatic_reload_last_timestamp_seconds",
		Help: "[ALPHA] Timestamp of the last automatic reload of admission manifest configuration split by status, plugin, and apiserver identity."},
		labels)
}

// ObserveManifestReload records a load of plugin's static manifests (the
// initial load included): status "success" when err is nil, "failure"
// otherwise. admitd has no apiserver identity, so apiserver_id_hash is empty
// and upstream's last_config_info series, emitted only with an identity, is
// absent.
func (m *Metrics) ObserveManifestReload(plugin string, err error) {
	if m == nil {
		return
	}
	status := "success"
	if err != nil {
		status = "failure"
	}
	m.reloads.WithLabelValues(status, plugin, "").Inc()
	m.reloadTime.WithLabelValues(status, plugin, "").SetToCurrentTime()
}
