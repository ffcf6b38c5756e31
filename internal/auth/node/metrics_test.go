package node

import (
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prometheus/client_golang/prometheus"
)

func TestMetricsCountChangesNotSkips(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	g := NewGraph(NewMetrics(reg))
	p := newPod("ns", "p", "n1", withSecretVolume("s"))
	g.AddPod(p)
	g.UpdatePod(p, p)                  // skipped: nothing changed
	g.AddPod(newPod("ns", "q", ""))    // skipped: not bound
	g.DeletePod(newPod("ns", "q", "")) // skipped: not bound
	g.DeletePod(p)
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va"}, Spec: storagev1.VolumeAttachmentSpec{NodeName: "n1"}}
	g.AddVolumeAttachment(va)
	g.UpdateVolumeAttachment(va, va) // skipped: same node

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != "node_authorizer_graph_actions_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetHistogram().GetSampleCount()
		}
	}
	want := map[string]uint64{"AddPod": 1, "DeletePod": 1, "AddVolumeAttachment": 1}
	if len(got) != len(want) {
		t.Errorf("observed operations %v, want %v", got, want)
	}
	for op, n := range want {
		if got[op] != n {
			t.Errorf("samples of %s = %d, want %d", op, got[op], n)
		}
	}
}
