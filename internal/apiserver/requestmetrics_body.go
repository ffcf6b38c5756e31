package apiserver

import "github.com/prometheus/client_golang/prometheus"

// bodySizeBuckets are upstream's buckets of apiserver_request_body_size_bytes:
// 50 KB, then every 100 KB up to just past the 3 MB request limit.
var bodySizeBuckets = prometheus.LinearBuckets(50000, 100000, 31)

// bodySizeKey is a series of apiserver_request_body_size_bytes.
type bodySizeKey struct{ group, resource, verb string }

// bodySizes is apiserver_request_body_size_bytes, with its series looked
// up once.
type bodySizes struct {
	vec    *prometheus.HistogramVec
	series seriesMap[bodySizeKey, prometheus.Observer]
}

func newBodySizes() *bodySizes {
	return &bodySizes{vec: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_request_body_size_bytes",
		Help:    "[ALPHA] Apiserver request body size in bytes broken out by resource and verb.",
		Buckets: bodySizeBuckets}, []string{"group", "resource", "verb"})}
}

func (b *bodySizes) newSeries(k bodySizeKey) prometheus.Observer {
	return b.vec.WithLabelValues(k.group, k.resource, k.verb)
}

// bodyVerbs are upstream's verb labels of the handlers that read a body;
// a subresource counts under its resource, as upstream's handlers label it.
var bodyVerbs = map[string]string{"create": "create", "update": "update", "patch": "patch", "delete": "delete",
	"deletecollection": "delete_collection"}

// recordBodySize observes the size of a body read whole, as upstream's
// create, update, patch, delete and deletecollection handlers do once they
// have read it within the limit.
func (m *RequestMetrics) recordBodySize(info *requestInfo, size int) {
	verb, ok := bodyVerbs[info.Verb]
	if !ok || !info.IsResource {
		return
	}
	m.bodies.series.get(bodySizeKey{info.Group, info.Resource, verb}, m.bodies.newSeries).Observe(float64(size))
}
