package conversion

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/admitd/admitd/pkg/webhook"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

func TestMetricsAreUpstreams(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics := NewMetrics(reg)
	good := webhooktest.Start(t, webhook.ServeConversion(webhook.ConverterFunc(hostPortToAddress)))
	crd := webhookCRD(good.URL, good.CABundle(), "v1")
	crd.Name = "endpoints.stable.example.com"
	conv, err := NewFactory(nil, metrics).ConverterFor(crd)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = conv.Convert(ctx, []*unstructured.Unstructured{endpointV1("a", "h", 1)}, gvV2)
	_ = conv.Convert(ctx, []*unstructured.Unstructured{endpointV1("a", "h", 1)}, gvV1) // nothing to convert
	good.Close()
	_ = conv.Convert(ctx, []*unstructured.Unstructured{endpointV1("a", "h", 1)}, gvV2)

	want := `
# HELP apiserver_conversion_webhook_request_total [ALPHA] Counter for conversion webhook requests with success/failure and failure error type
# TYPE apiserver_conversion_webhook_request_total counter
apiserver_conversion_webhook_request_total{failure_type="",result="success"} 2
apiserver_conversion_webhook_request_total{failure_type="conversion_webhook_call_failure",result="failure"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "apiserver_conversion_webhook_request_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(metrics.perCRD); n != 2 {
		t.Errorf("%d series of apiserver_crd_conversion_webhook_duration_seconds, want 2 (v1 to v2 succeeded and failed)", n)
	}
}
