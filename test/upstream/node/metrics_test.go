package node

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/metrics/legacyregistry"
	upstream "k8s.io/kubernetes/plugin/pkg/auth/authorizer/node"

	"github.com/admitd/admitd/internal/auth/node"
)

// TestMetrics compares, per operation, how many graph changes each side
// observes over generated events (upstream observes in its Graph methods,
// so changes its informer handlers skip are not counted).
func TestMetrics(t *testing.T) {
	const metric = "node_authorizer_graph_actions_duration_seconds"
	upstream.RegisterMetrics()
	before := samples(t, legacyregistry.DefaultGatherer, metric)

	reg := prometheus.NewPedanticRegistry()
	p := newPair(t)
	p.ours = node.NewGraph(node.NewMetrics(reg))
	g, w := gen{rand.New(rand.NewPCG(7, 7))}, newWorld()
	for range 3000 {
		w.step(g, p)
	}

	after := samples(t, legacyregistry.DefaultGatherer, metric)
	ours := samples(t, reg, metric)
	for op, n := range after {
		if got, want := ours[op], n-before[op]; got != want {
			t.Errorf("%s{operation=%q}: %d samples, upstream %d", metric, op, got, want)
		}
	}
	if len(ours) != len(after) || len(ours) < 8 {
		t.Errorf("operations observed %v, upstream %v", ours, after)
	}
	if got, want := bounds(t, reg, metric), bounds(t, legacyregistry.DefaultGatherer, metric); len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s buckets %v, upstream %v", metric, got, want)
	}
}

// bounds are the bucket upper bounds of the first series of name.
func bounds(t *testing.T, g prometheus.Gatherer, name string) []float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) > 0 {
			for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
				out = append(out, b.GetUpperBound())
			}
		}
	}
	return out
}

func samples(t *testing.T, g prometheus.Gatherer, name string) map[string]uint64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				out[label(m, "operation")] = m.GetHistogram().GetSampleCount()
			}
		}
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
