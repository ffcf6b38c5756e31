package admission

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

func TestManifestReloadMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	m.ObserveManifestReload("ValidatingAdmissionWebhook", nil)
	m.ObserveManifestReload("ValidatingAdmissionWebhook", errors.New("broken"))
	m.ObserveManifestReload("MutatingAdmissionPolicy", nil)
	want := `# HELP apiserver_manifest_admission_config_controller_automatic_reloads_total [ALPHA] Total number of automatic reloads of admission manifest configuration split by status, plugin, and apiserver identity.
# TYPE apiserver_manifest_admission_config_controller_automatic_reloads_total counter
apiserver_manifest_admission_config_controller_automatic_reloads_total{apiserver_id_hash="",plugin="MutatingAdmissionPolicy",status="success"} 1
apiserver_manifest_admission_config_controller_automatic_reloads_total{apiserver_id_hash="",plugin="ValidatingAdmissionWebhook",status="failure"} 1
apiserver_manifest_admission_config_controller_automatic_reloads_total{apiserver_id_hash="",plugin="ValidatingAdmissionWebhook",status="success"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "apiserver_manifest_admission_config_controller_automatic_reloads_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.reloadTime); n != 3 {
		t.Errorf("last_timestamp_seconds series = %d, want 3", n)
	}
	if v := testutil.ToFloat64(m.reloadTime.WithLabelValues("failure", "ValidatingAdmissionWebhook", "")); v <= 0 {
		t.Errorf("failure timestamp = %v, want the load time", v)
	}
	if n := testutil.CollectAndCount(reg, "apiserver_manifest_admission_config_controller_last_config_info"); n != 0 {
		t.Errorf("last_config_info series = %d, want none without an apiserver identity", n)
	}
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Metrics
	m.ObserveManifestReload("p", nil)
	m.ObserveMatchConditionEvalErrors("n", "webhook", "admit", Create, 1)
	m.ObserveMatchConditionExclusion("n", "webhook", "admit", Create)
	m.ObserveMatchConditionEvaluationTime(0, "n", "webhook", "admit", Create)
}

// Each webhook call is counted in its own series, whether its series was
// looked up before or not, and past the series kept for reuse too.
func TestWebhookSeriesCountEveryCall(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	for range 3 {
		m.ObserveWebhook(time.Millisecond, false, Create, "admit", "a.example.com", 200)
	}
	m.ObserveWebhook(time.Millisecond, true, Create, "admit", "a.example.com", 403)
	m.ObserveWebhook(time.Millisecond, false, Update, "validating", "a.example.com", 200)
	m.ObserveWebhook(time.Millisecond, false, Create, "admit", "b.example.com", 700)
	for i := range maxWebhookSeries + 10 {
		m.ObserveWebhook(time.Millisecond, false, Delete, "validating", fmt.Sprintf("w%d.example.com", i), 200)
	}
	m.ObserveWebhook(time.Millisecond, false, Delete, "validating", "late.example.com", 200)
	m.ObserveWebhook(time.Millisecond, false, Delete, "validating", "late.example.com", 200)
	for _, c := range []struct {
		labels []string
		want   float64
	}{
		{[]string{"a.example.com", "admit", "CREATE", "200", "false"}, 3},
		{[]string{"a.example.com", "admit", "CREATE", "403", "true"}, 1},
		{[]string{"a.example.com", "validating", "UPDATE", "200", "false"}, 1},
		{[]string{"b.example.com", "admit", "CREATE", "600", "false"}, 1},
		{[]string{"w4100.example.com", "validating", "DELETE", "200", "false"}, 1},
		{[]string{"late.example.com", "validating", "DELETE", "200", "false"}, 2},
	} {
		if got := testutil.ToFloat64(m.webhookTotal.WithLabelValues(c.labels...)); got != c.want {
			t.Errorf("webhook_admission_total%v = %v, want %v", c.labels, got, c.want)
		}
	}
	h := m.webhook.WithLabelValues("a.example.com", "admit", "CREATE", "false").(prometheus.Histogram)
	var out dto.Metric
	if err := h.Write(&out); err != nil {
		t.Fatal(err)
	}
	if n := out.GetHistogram().GetSampleCount(); n != 3 {
		t.Errorf("duration samples of a.example.com's creates = %d, want 3", n)
	}
	if n := m.webhookSeriesCount.Load(); n != maxWebhookSeries {
		t.Errorf("series kept = %d, want the bound %d", n, maxWebhookSeries)
	}
}

func BenchmarkObserveWebhook(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry())
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveWebhook(time.Millisecond, false, Create, "admit", "m.bench.example.com", 200)
	}
}
