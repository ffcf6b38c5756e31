package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/admitd/admitd/internal/conversion"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
	"github.com/admitd/admitd/pkg/webhook"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// convertBackend converts Backends between v1 (spec.host, spec.port) and v2
// (spec.address).
func convertBackend(_ context.Context, obj *unstructured.Unstructured, to string) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	out.SetAPIVersion(to)
	if strings.HasSuffix(to, "/v2") {
		host, _, _ := unstructured.NestedString(obj.Object, "spec", "host")
		port, _, _ := unstructured.NestedInt64(obj.Object, "spec", "port")
		out.Object["spec"] = map[string]any{"address": net.JoinHostPort(host, strconv.FormatInt(port, 10))}
		return out, nil
	}
	addr, _, _ := unstructured.NestedString(obj.Object, "spec", "address")
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	n, err := strconv.ParseInt(port, 10, 64)
	out.Object["spec"] = map[string]any{"host": host, "port": n}
	return out, err
}

// backendCRDJSON serves Backends in v1 (stored) and v2, converted by the
// webhook at url.
func backendCRDJSON(url string, caBundle []byte) string {
	schema := `{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}`
	ca, _ := json.Marshal(caBundle)
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"backends.net.example.com"},
"spec":{"group":"net.example.com","scope":"Namespaced","names":{"kind":"Backend","plural":"backends"},
"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"` + url + `","caBundle":` + string(ca) + `}}},
"versions":[{"name":"v1","served":true,"storage":true,"schema":` + schema + `},{"name":"v2","served":true,"storage":false,"schema":` + schema + `}]}}`
}

// newConvertingServer is a test server whose custom resources convert
// through internal/conversion, with the Backend definition of a local
// HTTPS conversion webhook and n Backends stored in v1.
func newConvertingServer(tb testing.TB, n int) *testServer {
	tb.Helper()
	hook := webhooktest.Start(tb, webhook.ServeConversion(webhook.ConverterFunc(convertBackend)))
	cat := registry.NewCatalogue()
	cat.SetConverterFactory(conversion.NewFactory(nil, nil).ConverterFor)
	s := New(testConfig(memory.New(), cat))
	if err := s.Bootstrap(context.Background()); err != nil {
		tb.Fatalf("Bootstrap: %v", err)
	}
	ts := &testServer{t: tb, s: s}
	ts.must(201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", mediaJSON, backendCRDJSON(hook.URL+"/convert", hook.CABundle()))
	for i := range n {
		body := fmt.Sprintf(`{"apiVersion":"net.example.com/v1","kind":"Backend","metadata":{"name":"b%04d","labels":{"app":"web"}},"spec":{"host":"host-%d.example.com","port":%d}}`, i, i, 1000+i)
		ts.must(201, "POST", backendsPath("v1"), mediaJSON, body)
	}
	return ts
}

func backendsPath(version string) string {
	return "/apis/net.example.com/" + version + "/namespaces/default/backends"
}

// BenchmarkListCustomResources lists 1,000 Backends in their storage
// version (no conversion) and in v2 (one ConversionReview of 1,000
// objects to a local HTTPS webhook).
func BenchmarkListCustomResources(b *testing.B) {
	ts := newConvertingServer(b, 1000)
	for _, bc := range []struct{ name, version string }{{"unconverted", "v1"}, {"webhook", "v2"}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if w := ts.do("GET", backendsPath(bc.version), "", ""); w.Code != 200 {
					b.Fatalf("list = %d %s", w.Code, w.Body)
				}
			}
		})
	}
}
