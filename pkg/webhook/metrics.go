package webhook

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Results, the values of the metrics' result label.
const (
	resultAllowed = "allowed" // allowed, without a patch
	resultPatched = "patched" // allowed, with a patch
	resultDenied  = "denied"  // not allowed, code below 500
	resultError   = "error"   // not allowed, code 500 or above (Errored)
	resultInvalid = "invalid" // rejected before the Handler: size, content type, decoding
	resultPanic   = "panic"   // the Handler panicked; answered with 500
	resultAborted = "aborted" // the Handler aborted (http.ErrAbortHandler): no answer
)

// metrics are the HTTP handler's own: requests, latency and requests in
// flight, by path (the ServeMux pattern, or Options.Path) and result. The
// latency buckets are upstream's for webhook admission latency.
type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	return &metrics{
		requests: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "admitd_webhook_requests_total",
			Help: "Admission reviews received by the webhook, by path and result.",
		}, []string{"path", "result"})),
		latency: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "admitd_webhook_request_duration_seconds",
			Help:    "Time to answer an admission review, by path and result.",
			Buckets: []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25},
		}, []string{"path", "result"})),
		inFlight: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "admitd_webhook_requests_in_flight",
			Help: "Admission reviews being answered, by path.",
		}, []string{"path"})),
	}
}

// register registers c, or returns the equal collector already registered
// (several handlers share one registerer). Any other failure is a
// programming error and panics, as prometheus.MustRegister does.
func register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(T); ok {
			return existing
		}
	}
	panic(err)
}

// begin counts a request in flight and returns the function that records
// its end.
func (m *metrics) begin(path string) func(result string) {
	if m == nil {
		return func(string) {}
	}
	start := time.Now()
	g := m.inFlight.WithLabelValues(path)
	g.Inc()
	return func(result string) {
		g.Dec()
		m.requests.WithLabelValues(path, result).Inc()
		m.latency.WithLabelValues(path, result).Observe(time.Since(start).Seconds())
	}
}

// resultOf classifies an answer for the metrics.
func resultOf(r *Response) string {
	switch {
	case r.Allowed && len(r.Patch) > 0:
		return resultPatched
	case r.Allowed:
		return resultAllowed
	case r.Result != nil && r.Result.Code >= 500:
		return resultError
	}
	return resultDenied
}
