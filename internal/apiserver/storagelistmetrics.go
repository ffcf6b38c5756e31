package apiserver

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// storageListBackend is the storage label of the lists admitd serves:
// every list reads the store (etcd or the embedded one) page by page, as
// upstream's lists that bypass the watch cache, which admitd does not
// have. No index narrows what is read, so the index label is empty.
const storageListBackend = "etcd"

// storageLists are kube-apiserver's apiserver_storage_list_total,
// apiserver_storage_list_fetched_objects_total,
// apiserver_storage_list_evaluated_objects_total,
// apiserver_storage_list_returned_objects_total and
// apiserver_storage_list_duration_seconds: what each list read from
// storage, tested against its selectors and returned, and how long it
// took, with each resource's series looked up once.
type storageLists struct {
	total, fetched, evaluated, returned *prometheus.CounterVec
	duration                            *prometheus.HistogramVec
	series                              seriesMap[schema.GroupResource, *storageListSeries]
}

func newStorageLists() *storageLists {
	storageIndex := []string{"group", "resource", "storage", "index"}
	byStorage := []string{"group", "resource", "storage"}
	return &storageLists{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_storage_list_total",
			Help: "[ALPHA] Number of LIST requests served from storage"}, storageIndex),
		fetched: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_storage_list_fetched_objects_total",
			Help: "[ALPHA] Number of objects read from storage in the course of serving a LIST request"}, storageIndex),
		evaluated: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_storage_list_evaluated_objects_total",
			Help: "[ALPHA] Number of objects tested in the course of serving a LIST request from storage"}, byStorage),
		returned: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_storage_list_returned_objects_total",
			Help: "[ALPHA] Number of objects returned for a LIST request from storage"}, byStorage),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_storage_list_duration_seconds",
			Help:    "[ALPHA] Latency of the storage layer GetList call in seconds, including object decode, split by whether etcd RangeStream was used.",
			Buckets: requestDurationBuckets}, []string{"streamed", "group", "resource"}),
	}
}

func (l *storageLists) collectors() []prometheus.Collector {
	return []prometheus.Collector{l.total, l.fetched, l.evaluated, l.returned, l.duration}
}

func (l *storageLists) newSeries(gr schema.GroupResource) *storageListSeries {
	return &storageListSeries{
		total:     l.total.WithLabelValues(gr.Group, gr.Resource, storageListBackend, ""),
		fetched:   l.fetched.WithLabelValues(gr.Group, gr.Resource, storageListBackend, ""),
		evaluated: l.evaluated.WithLabelValues(gr.Group, gr.Resource, storageListBackend),
		returned:  l.returned.WithLabelValues(gr.Group, gr.Resource, storageListBackend),
		// admitd reads pages, never etcd's RangeStream
		duration: l.duration.WithLabelValues("false", gr.Group, gr.Resource),
	}
}

// storageListSeries are one resource's series of the lists served.
type storageListSeries struct {
	total, fetched, evaluated, returned prometheus.Counter
	duration                            prometheus.Observer
}

// storageListCost is what one list cost: the keys it read from storage,
// the objects it tested against its selectors and those it returned.
type storageListCost struct {
	fetched, evaluated, returned int64
}

// recordStorageList counts a list of gr that started at start, whether it
// succeeded or not, as upstream counts the cost of every one.
func (m *RequestMetrics) recordStorageList(gr schema.GroupResource, cost storageListCost, start time.Time) {
	if m == nil {
		return
	}
	s := m.storageLists.series.get(gr, m.storageLists.newSeries)
	s.total.Inc()
	s.fetched.Add(float64(cost.fetched))
	s.evaluated.Add(float64(cost.evaluated))
	s.returned.Add(float64(cost.returned))
	s.duration.Observe(time.Since(start).Seconds())
}
