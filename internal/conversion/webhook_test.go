package conversion

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/webhook"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

var (
	gvV1 = schema.GroupVersion{Group: "stable.example.com", Version: "v1"}
	gvV2 = schema.GroupVersion{Group: "stable.example.com", Version: "v2"}
)

// hostPortToAddress converts v1 (spec.host, spec.port) and v2
// (spec.address) of kind Endpoint.
func hostPortToAddress(_ context.Context, obj *unstructured.Unstructured, to string) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	out.SetAPIVersion(to)
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	switch to {
	case gvV2.String():
		host, _, _ := unstructured.NestedString(spec, "host")
		port, _, _ := unstructured.NestedInt64(spec, "port")
		out.Object["spec"] = map[string]any{"address": host + ":" + strconv.FormatInt(port, 10)}
	case gvV1.String():
		addr, _, _ := unstructured.NestedString(spec, "address")
		host, port, _ := strings.Cut(addr, ":")
		n, _ := strconv.ParseInt(port, 10, 64)
		out.Object["spec"] = map[string]any{"host": host, "port": n}
	}
	return out, nil
}

// recorder keeps the bodies of the reviews a webhook received.
type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
	next   http.Handler
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.bodies = append(r.bodies, body)
	r.mu.Unlock()
	req.Body = io.NopCloser(strings.NewReader(string(body)))
	r.next.ServeHTTP(w, req)
}

func (r *recorder) reviews(t *testing.T) []map[string]any {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, b := range r.bodies {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("review is not JSON: %v", err)
		}
		out = append(out, m)
	}
	return out
}

func webhookCRD(url string, caBundle []byte, versions ...string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "stable.example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Endpoint", Plural: "endpoints"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true}, {Name: "v2", Served: true, Storage: true},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
					ConversionReviewVersions: versions,
				},
			},
		},
	}
}

func endpointV1(name, host string, port int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvV1.String(), "kind": "Endpoint",
		"metadata": map[string]any{"name": name, "namespace": "default", "uid": "uid-" + name},
		"spec":     map[string]any{"host": host, "port": port},
	}}
	return u
}

func converterFor(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) registry.Converter {
	t.Helper()
	c, err := NewFactory(nil, nil).ConverterFor(crd)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestWebhookConvertsAListInOneReview(t *testing.T) {
	rec := &recorder{next: webhook.ServeConversion(webhook.ConverterFunc(hostPortToAddress))}
	srv := webhooktest.Start(t, rec)
	conv := converterFor(t, webhookCRD(srv.URL+"/convert", srv.CABundle(), "v1"))
	already := endpointV1("c", "", 0)
	already.SetAPIVersion(gvV2.String())
	already.Object["spec"] = map[string]any{"address": "kept:1"}
	objs := []*unstructured.Unstructured{endpointV1("a", "example.com", 80), already, endpointV1("b", "example.org", 443)}
	if err := conv.Convert(context.Background(), objs, gvV2); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"example.com:80", "kept:1", "example.org:443"} {
		got, _, _ := unstructured.NestedString(objs[i].Object, "spec", "address")
		if got != want || objs[i].GetAPIVersion() != gvV2.String() {
			t.Errorf("object %d: %s address %q, want %s %q", i, objs[i].GetAPIVersion(), got, gvV2, want)
		}
	}
	reviews := rec.reviews(t)
	if len(reviews) != 1 {
		t.Fatalf("%d reviews, want 1", len(reviews))
	}
	r := reviews[0]
	req := r["request"].(map[string]any)
	if r["apiVersion"] != "apiextensions.k8s.io/v1" || req["desiredAPIVersion"] != gvV2.String() || len(req["objects"].([]any)) != 2 {
		t.Errorf("review: %v", r)
	}
	// the request carries an empty response, as upstream's
	if _, ok := r["response"]; !ok {
		t.Errorf("review has no response: %v", r)
	}
}

func TestReviewVersionIsTheFirstSupported(t *testing.T) {
	rec := &recorder{next: webhook.ServeConversion(webhook.ConverterFunc(hostPortToAddress))}
	srv := webhooktest.Start(t, rec)
	conv := converterFor(t, webhookCRD(srv.URL, srv.CABundle(), "v2", "v1beta1", "v1"))
	if err := conv.Convert(context.Background(), []*unstructured.Unstructured{endpointV1("a", "h", 1)}, gvV2); err != nil {
		t.Fatal(err)
	}
	if got := rec.reviews(t)[0]["apiVersion"]; got != "apiextensions.k8s.io/v1beta1" {
		t.Errorf("review version %v, want v1beta1", got)
	}
	none := converterFor(t, webhookCRD(srv.URL, srv.CABundle(), "v3"))
	err := none.Convert(context.Background(), []*unstructured.Unstructured{endpointV1("a", "h", 1)}, gvV2)
	if err == nil || err.Error() != "no supported conversion review versions" {
		t.Errorf("err = %v", err)
	}
}

func TestObjectsInTheDesiredVersionMakeNoCall(t *testing.T) {
	rec := &recorder{next: webhook.ServeConversion(webhook.ConverterFunc(hostPortToAddress))}
	srv := webhooktest.Start(t, rec)
	conv := converterFor(t, webhookCRD(srv.URL, srv.CABundle(), "v1"))
	if err := conv.Convert(context.Background(), []*unstructured.Unstructured{endpointV1("a", "h", 1)}, gvV1); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.reviews(t)); n != 0 {
		t.Errorf("%d reviews, want none", n)
	}
}

func TestUnreachableWebhookFailsWithUpstreamsMessage(t *testing.T) {
	srv := webhooktest.Start(t, http.NotFoundHandler())
	url := srv.URL + "/convert"
	srv.Close()
	conv := converterFor(t, webhookCRD(url, srv.CABundle(), "v1"))
	err := conv.Convert(context.Background(), []*unstructured.Unstructured{endpointV1("a", "h", 1)}, gvV2)
	want := `conversion webhook for stable.example.com/v1, Kind=Endpoint failed: Post "` + url + `?timeout=30s": dial tcp `
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v\nwant prefix %s", err, want)
	}
}

func TestConvertingFromAVersionTheDefinitionLacks(t *testing.T) {
	conv := converterFor(t, webhookCRD("https://127.0.0.1:1", nil, "v1"))
	obj := endpointV1("a", "h", 1)
	obj.SetAPIVersion("stable.example.com/v0")
	err := conv.Convert(context.Background(), []*unstructured.Unstructured{obj}, gvV2)
	if err == nil || err.Error() != "request to convert CR from an invalid group/version: stable.example.com/v0" {
		t.Errorf("err = %v", err)
	}
}

// mapResolver resolves services from a map, as --service-map does.
type mapResolver map[string]string

func (m mapResolver) ResolveService(namespace, name string, port int32) (string, error) {
	addr, ok := m[name+"."+namespace+".svc:"+strconv.Itoa(int(port))]
	if !ok {
		return "", fmt.Errorf("service %q not found", name)
	}
	return addr, nil
}

func TestServiceWebhookIsDialledWhereTheResolverSays(t *testing.T) {
	rec := &recorder{next: webhook.ServeConversion(webhook.ConverterFunc(hostPortToAddress))}
	srv, err := webhooktest.NewUnstartedServer(nil, rec, "convert.webhooks.svc")
	if err != nil {
		t.Fatal(err)
	}
	srv.StartTLS()
	defer srv.Close()
	port, path := int32(8443), "/convert"
	crd := webhookCRD("", srv.CABundle(), "v1")
	crd.Spec.Conversion.Webhook.ClientConfig = &apiextensionsv1.WebhookClientConfig{CABundle: srv.CABundle(),
		Service: &apiextensionsv1.ServiceReference{Namespace: "webhooks", Name: "convert", Port: &port, Path: &path}}
	addr := strings.TrimPrefix(srv.URL, "https://")
	conv, err := NewFactory(mapResolver{"convert.webhooks.svc:8443": addr}, nil).ConverterFor(crd)
	if err != nil {
		t.Fatal(err)
	}
	objs := []*unstructured.Unstructured{endpointV1("a", "h", 1)}
	if err := conv.Convert(context.Background(), objs, gvV2); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(objs[0].Object, "spec", "address"); got != "h:1" {
		t.Errorf("converted %v", objs[0].Object)
	}
	other, err := NewFactory(mapResolver{}, nil).ConverterFor(crd)
	if err != nil {
		t.Fatal(err)
	}
	err = other.Convert(context.Background(), []*unstructured.Unstructured{endpointV1("a", "h", 1)}, gvV2)
	want := `conversion webhook for stable.example.com/v1, Kind=Endpoint failed: Post "https://convert.webhooks.svc:8443/convert?timeout=30s": service "convert" not found`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}
