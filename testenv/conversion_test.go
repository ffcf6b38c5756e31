package testenv_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/admitd/admitd/pkg/webhook"
	"github.com/admitd/admitd/testenv"
)

var (
	crdGV  = schema.GroupVersion{Group: "net.example.com", Version: "v1"}
	crdRes = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
)

// endpointCRD serves kind Endpoint in v1 (spec.host, spec.port; stored)
// and v2 (spec.address).
func endpointCRD() map[string]any {
	spec := func(props map[string]any) map[string]any {
		return map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
			"spec": map[string]any{"type": "object", "properties": props}}}}
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "endpoints.net.example.com"},
		"spec": map[string]any{
			"group": "net.example.com", "scope": "Namespaced",
			"names": map[string]any{"kind": "Endpoint", "plural": "endpoints", "singular": "endpoint", "listKind": "EndpointList"},
			"versions": []any{
				map[string]any{"name": "v1", "served": true, "storage": true, "schema": spec(map[string]any{
					"host": map[string]any{"type": "string"}, "port": map[string]any{"type": "integer"}})},
				map[string]any{"name": "v2", "served": true, "storage": false, "schema": spec(map[string]any{
					"address": map[string]any{"type": "string"}})},
			},
		},
	}
}

// convertEndpoint converts between v1 and v2 of Endpoint.
func convertEndpoint(_ context.Context, obj *unstructured.Unstructured, to string) (*unstructured.Unstructured, error) {
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

func createCRD(t *testing.T, client dynamic.Interface) {
	t.Helper()
	if _, err := client.Resource(crdRes).Create(context.Background(), &unstructured.Unstructured{Object: endpointCRD()}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestConversionWebhookConvertsReadsAndWrites(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	client := dynamic.NewForConfigOrDie(env.Config)
	createCRD(t, client)
	var reviews atomic.Int32
	w := env.ServeWebhook(t, webhook.ServeConversion(webhook.ConverterFunc(func(ctx context.Context, obj *unstructured.Unstructured, to string) (*unstructured.Unstructured, error) {
		reviews.Add(1)
		return convertEndpoint(ctx, obj, to)
	})))
	env.RegisterConversion(t, "endpoints.net.example.com", w, "/convert")
	v1 := client.Resource(crdGV.WithResource("endpoints")).Namespace("default")
	v2c := client.Resource(schema.GroupVersionResource{Group: "net.example.com", Version: "v2", Resource: "endpoints"}).Namespace("default")

	db := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "net.example.com/v1", "kind": "Endpoint",
		"metadata": map[string]any{"name": "db"}, "spec": map[string]any{"host": "db.local", "port": int64(5432)}}}
	if _, err := v1.Create(ctx, db, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := v2c.Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if addr, _, _ := unstructured.NestedString(got.Object, "spec", "address"); addr != "db.local:5432" || got.GetAPIVersion() != "net.example.com/v2" {
		t.Errorf("v2 read: %v", got.Object)
	}
	// a v2 create is stored in v1 and answered in v2
	cache := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "net.example.com/v2", "kind": "Endpoint",
		"metadata": map[string]any{"name": "cache"}, "spec": map[string]any{"address": "cache.local:6379"}}}
	created, err := v2c.Create(ctx, cache, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if addr, _, _ := unstructured.NestedString(created.Object, "spec", "address"); addr != "cache.local:6379" {
		t.Errorf("v2 create answered %v", created.Object)
	}
	back, err := v1.Get(ctx, "cache", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if port, _, _ := unstructured.NestedInt64(back.Object, "spec", "port"); port != 6379 {
		t.Errorf("v1 read of a v2 create: %v", back.Object)
	}
	before := reviews.Load()
	list, err := v2c.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("v2 list: %v %v", err, list)
	}
	if n := reviews.Load() - before; n != 2 {
		t.Errorf("v2 list converted %d objects, want 2", n)
	}

	w.Close()
	_, err = v2c.Get(ctx, "db", metav1.GetOptions{})
	want := `conversion webhook for net.example.com/v1, Kind=Endpoint failed: Post "` + w.URL + `/convert?timeout=30s": dial tcp `
	if se, ok := err.(*apierrors.StatusError); !ok || se.ErrStatus.Code != 500 || !strings.HasPrefix(se.ErrStatus.Message, want) {
		t.Errorf("v2 read with the webhook down: %v\nwant 500 %s", err, want)
	}
	if _, err := v2c.List(ctx, metav1.ListOptions{}); err == nil || !strings.Contains(err.Error(), "conversion webhook for") {
		t.Errorf("v2 list with the webhook down: %v", err)
	}
	if _, err := v1.Get(ctx, "db", metav1.GetOptions{}); err != nil {
		t.Errorf("v1 read with the webhook down: %v", err)
	}
}
