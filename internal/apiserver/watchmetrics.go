package apiserver

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TerminatedWatchers registers upstream's apiserver_terminated_watchers_total
// with reg and returns what counts a watch ended because its client did
// not keep up (Config.OnWatcherTerminated).
func TerminatedWatchers(reg prometheus.Registerer) func(group, resource string) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_terminated_watchers_total",
		Help: "[ALPHA] Counter of watchers closed due to unresponsiveness broken by resource type."}, []string{"group", "resource"})
	reg.MustRegister(c)
	return func(group, resource string) { c.WithLabelValues(group, resource).Inc() }
}

// watchEventBuckets are upstream's buckets of apiserver_watch_events_sizes:
// 1 KiB to 128 KiB by doubling.
var watchEventBuckets = prometheus.ExponentialBuckets(1024, 2, 8)

// watchEvents are apiserver_watch_events_total and
// apiserver_watch_events_sizes, with their series looked up once per
// group, version and resource.
type watchEvents struct {
	total  *prometheus.CounterVec
	sizes  *prometheus.HistogramVec
	series seriesMap[schema.GroupVersionResource, *watchEventSeries]
}

func newWatchEvents() *watchEvents {
	return &watchEvents{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_watch_events_total",
			Help: "[BETA] Number of events sent in watch clients"}, []string{"group", "version", "resource"}),
		sizes: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_watch_events_sizes",
			Help: "[BETA] Watch event size distribution in bytes", Buckets: watchEventBuckets}, []string{"group", "version", "resource"}),
	}
}

func (e *watchEvents) newSeries(gvr schema.GroupVersionResource) *watchEventSeries {
	return &watchEventSeries{total: e.total.WithLabelValues(gvr.Group, gvr.Version, gvr.Resource),
		sizes: e.sizes.WithLabelValues(gvr.Group, gvr.Version, gvr.Resource)}
}

// watchEventSeries are one watched resource's series of the events sent.
type watchEventSeries struct {
	total prometheus.Counter
	sizes prometheus.Observer
}

// sent counts an event of size bytes (its encoding, without the length
// that frames a protobuf event, as upstream counts what it hands its
// framer). A nil e counts nothing.
func (e *watchEventSeries) sent(size int) {
	if e == nil {
		return
	}
	e.total.Inc()
	e.sizes.Observe(float64(size))
}

// watchStarted returns the series a watch of gvr counts its events in;
// they appear, at 0, once a watch of gvr has started, as upstream's.
func (m *RequestMetrics) watchStarted(gvr schema.GroupVersionResource) *watchEventSeries {
	if m == nil {
		return nil
	}
	return m.watches.series.get(gvr, m.watches.newSeries)
}
