package apiserver

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
)

const (
	hpaV1Path = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
	hpaV2Path = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
)

func TestHPAServedInTwoVersions(t *testing.T) {
	seer := &attrSeer{}
	ts := newTestServer(t, admission.NamedPlugin{Name: "seer", Plugin: seer})
	ts.must(201, "POST", hpaV1Path, "", `{"metadata":{"name":"web"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5}}`)
	if got, want := seer.take(), []string{"CREATE horizontalpodautoscalers autoscaling/v1.HorizontalPodAutoscaler web"}; !reflect.DeepEqual(got, want) {
		t.Errorf("admission saw %v, want %v", got, want)
	}
	var v2 autoscalingv2.HorizontalPodAutoscaler
	decodeInto(t, ts.do("GET", hpaV2Path+"/web", "", "").Body.Bytes(), &v2)
	if v2.APIVersion != "autoscaling/v2" || len(v2.Spec.Metrics) != 1 || *v2.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 {
		t.Errorf("v1 HPA read as v2 = %+v, want the implied 80%% CPU metric", v2)
	}

	// A v2-only metric survives a v1 update through the annotations.
	v2.Spec.Metrics = append(v2.Spec.Metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType,
		Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptrTo(resource.MustParse("10"))}}})
	body, _ := json.Marshal(&v2)
	ts.must(200, "PUT", hpaV2Path+"/web", "", string(body))
	var v1 autoscalingv1.HorizontalPodAutoscaler
	decodeInto(t, ts.do("GET", hpaV1Path+"/web", "", "").Body.Bytes(), &v1)
	if v1.APIVersion != "autoscaling/v1" || *v1.Spec.TargetCPUUtilizationPercentage != 80 || !strings.Contains(v1.Annotations["autoscaling.alpha.kubernetes.io/metrics"], `"qps"`) {
		t.Fatalf("v2 HPA read as v1 = %+v", v1)
	}
	v1.Spec.MaxReplicas = 7
	body, _ = json.Marshal(&v1)
	ts.must(200, "PUT", hpaV1Path+"/web", "", string(body))
	decodeInto(t, ts.do("GET", hpaV2Path+"/web", "", "").Body.Bytes(), &v2)
	if v2.Spec.MaxReplicas != 7 || len(v2.Spec.Metrics) != 2 || v2.Annotations["autoscaling.alpha.kubernetes.io/metrics"] != "" {
		t.Errorf("after a v1 update, v2 = %+v, want maxReplicas 7, both metrics and no round-trip annotation", v2.Spec)
	}

	w := ts.do("POST", hpaV2Path, "", `{"metadata":{"name":"bad"},"spec":{"scaleTargetRef":{"kind":"Deployment"},"maxReplicas":0}}`)
	if code, msg := statusMessage(t, w.Body.Bytes()); code != 422 || !strings.Contains(msg, "spec.maxReplicas: Required value") {
		t.Errorf("invalid HPA = %d %q", code, msg)
	}
}

func TestHPATable(t *testing.T) {
	ts := newTestServer(t)
	ts.must(201, "POST", hpaV1Path, "", `{"metadata":{"name":"web"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5}}`)
	for _, path := range []string{hpaV1Path, hpaV2Path} {
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		w := httptest.NewRecorder()
		ts.s.ServeHTTP(w, r)
		var table metav1.Table
		decodeInto(t, w.Body.Bytes(), &table)
		if len(table.Rows) != 1 || len(table.ColumnDefinitions) != 7 {
			t.Fatalf("%s table = %s", path, w.Body)
		}
		want := []any{"web", "Deployment/web", "cpu: <unknown>/80%", "1", float64(5), float64(0)}
		if got := table.Rows[0].Cells[:6]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s row = %v, want %v", path, got, want)
		}
	}
}
