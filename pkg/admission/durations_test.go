package admission

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestDurationVecExposesAsHistogramVec: the same observations, bucket
// bounds included, give the same families, labels, buckets and counts
// through a durationVec as through prometheus's HistogramVec, and sums
// equal to float precision.
func TestDurationVecExposesAsHistogramVec(t *testing.T) {
	opts := prometheus.HistogramOpts{Namespace: "apiserver", Subsystem: "admission", Name: "controller_admission_duration_seconds",
		Help: "help text", Buckets: []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5}}
	labels := []string{"name", "type", "operation", "rejected"}
	theirs, ours := prometheus.NewHistogramVec(opts, labels), newDurationVec(opts, labels)
	rng := rand.New(rand.NewPCG(1, 2))
	series := [][]string{{"LimitRanger", "admit", "CREATE", "false"}, {"LimitRanger", "validate", "CREATE", "true"}, {"Priority", "admit", "UPDATE", "false"}}
	edges := []time.Duration{0, 1, 5 * time.Millisecond, 5*time.Millisecond + 1, 25 * time.Millisecond, 100 * time.Millisecond,
		time.Second, 2500 * time.Millisecond, 2500*time.Millisecond + 1, time.Minute}
	for i := range 5000 {
		d := time.Duration(rng.Int64N(int64(3 * time.Second)))
		if i < len(edges) {
			d = edges[i]
		}
		lv := series[rng.IntN(len(series))]
		theirs.WithLabelValues(lv...).Observe(d.Seconds())
		ours.with(lv...).observe(d)
	}
	want, got := gather(t, theirs), gather(t, ours)
	if len(got) != len(want) || len(got) != len(series) {
		t.Fatalf("series: got %d, want %d", len(got), len(want))
	}
	for key, w := range want {
		g, ok := got[key]
		if !ok {
			t.Fatalf("series %s missing", key)
		}
		if g.GetSampleCount() != w.GetSampleCount() {
			t.Errorf("%s count: got %d, want %d", key, g.GetSampleCount(), w.GetSampleCount())
		}
		if diff := math.Abs(g.GetSampleSum() - w.GetSampleSum()); diff > 1e-9*w.GetSampleSum() {
			t.Errorf("%s sum: got %v, want %v", key, g.GetSampleSum(), w.GetSampleSum())
		}
		if len(g.Bucket) != len(w.Bucket) {
			t.Fatalf("%s buckets: got %d, want %d", key, len(g.Bucket), len(w.Bucket))
		}
		for i := range w.Bucket {
			if g.Bucket[i].GetUpperBound() != w.Bucket[i].GetUpperBound() || g.Bucket[i].GetCumulativeCount() != w.Bucket[i].GetCumulativeCount() {
				t.Errorf("%s bucket %d: got %v, want %v", key, i, g.Bucket[i], w.Bucket[i])
			}
		}
	}
}

// gather collects c through a registry and returns its histograms by
// label values.
func gather(t *testing.T, c prometheus.Collector) map[string]*dto.Histogram {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.Histogram{}
	for _, f := range families {
		if f.GetName() != "apiserver_admission_controller_admission_duration_seconds" || f.GetHelp() != "help text" || f.GetType() != dto.MetricType_HISTOGRAM {
			t.Fatalf("family %s %q %v", f.GetName(), f.GetHelp(), f.GetType())
		}
		for _, m := range f.Metric {
			key := ""
			for _, l := range m.Label {
				key += l.GetName() + "=" + l.GetValue() + ","
			}
			out[key] = m.Histogram
		}
	}
	return out
}

func BenchmarkControllerSeriesObserve(b *testing.B) {
	s := newDurationVec(prometheus.HistogramOpts{Name: "x", Buckets: []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5}}, nil).with()
	for b.Loop() {
		s.observe(300 * time.Nanosecond)
	}
}

func TestDurationVecLookupAllocatesNothing(t *testing.T) {
	v := newDurationVec(prometheus.HistogramOpts{Name: "x", Buckets: []float64{1}}, []string{"a", "b", "c", "d"})
	v.with("w", "x", "y", "z")
	if n := testing.AllocsPerRun(100, func() { v.with("w", "x", "y", "z").observe(time.Millisecond) }); n != 0 {
		t.Errorf("looking up and observing an existing series allocated %v times", n)
	}
}
