package admission

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// durationVec is a histogram vector of durations, exposed exactly as a
// prometheus.HistogramVec in seconds with the same buckets, for series
// observed far more often than they are scraped: the compiled-in plugins'
// latencies, a score of observations per request. A series counts in
// integer nanoseconds, two atomic additions per observation (its bucket and
// its sum) where a HistogramVec series takes four, one a compare-and-swap
// loop on a float. A scrape derives the count from the buckets, so count and
// buckets always agree.
type durationVec struct {
	desc   *prometheus.Desc
	bounds []float64 // upper bounds in seconds, as exposed
	limits []int64   // the same bounds in nanoseconds

	mu     sync.Mutex
	byKey  map[durationKey]*durationSeries
	series []*durationSeries
}

// durationKey is a series' label values, at most maxDurationLabels of
// them: a map key that costs no allocation to look up.
type durationKey [maxDurationLabels]string

const maxDurationLabels = 4

// durationSeries is one series of a durationVec.
type durationSeries struct {
	labels []string
	limits []int64
	counts []atomic.Uint64 // per bucket, the last one +Inf
	sumNs  atomic.Int64
}

// newDurationVec returns a vector named by opts, with its buckets and help,
// and the given label names.
func newDurationVec(opts prometheus.HistogramOpts, labels []string) *durationVec {
	if len(labels) > maxDurationLabels {
		panic("durationVec: too many labels") // a programming error
	}
	v := &durationVec{
		desc:   prometheus.NewDesc(prometheus.BuildFQName(opts.Namespace, opts.Subsystem, opts.Name), opts.Help, labels, nil),
		bounds: opts.Buckets,
		limits: make([]int64, len(opts.Buckets)),
		byKey:  map[durationKey]*durationSeries{},
	}
	for i, b := range opts.Buckets {
		v.limits[i] = int64(math.Round(b * float64(time.Second)))
	}
	return v
}

// with returns the series of the label values, creating it on first use.
func (v *durationVec) with(values ...string) *durationSeries {
	var key durationKey
	copy(key[:], values)
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.byKey[key]; ok {
		return s
	}
	s := &durationSeries{labels: slices.Clone(values), limits: v.limits, counts: make([]atomic.Uint64, len(v.limits)+1)}
	v.byKey[key] = s
	v.series = append(v.series, s)
	return s
}

// observe counts d in its bucket: the first whose upper bound is at least
// d, as a prometheus histogram places a value.
func (s *durationSeries) observe(d time.Duration) {
	i := 0
	for i < len(s.limits) && int64(d) > s.limits[i] {
		i++
	}
	s.counts[i].Add(1)
	if d != 0 {
		s.sumNs.Add(int64(d))
	}
}

// Describe implements prometheus.Collector.
func (v *durationVec) Describe(ch chan<- *prometheus.Desc) { ch <- v.desc }

// Collect implements prometheus.Collector: every series observed so far,
// with cumulative buckets in seconds.
func (v *durationVec) Collect(ch chan<- prometheus.Metric) {
	v.mu.Lock()
	series := append([]*durationSeries(nil), v.series...)
	v.mu.Unlock()
	for _, s := range series {
		buckets := make(map[float64]uint64, len(v.bounds))
		var count uint64
		for i := range s.counts {
			count += s.counts[i].Load()
			if i < len(v.bounds) {
				buckets[v.bounds[i]] = count
			}
		}
		sum := time.Duration(s.sumNs.Load()).Seconds()
		ch <- prometheus.MustNewConstHistogram(v.desc, count, sum, buckets, s.labels...)
	}
}
