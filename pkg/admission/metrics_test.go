package admission

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
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
