package testenv_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
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
	// The transport's error after Post "...": (dial tcp ... refused, or EOF on
	// a kept-alive connection the closing server dropped) is the client's.
	want := `conversion webhook for net.example.com/v1, Kind=Endpoint failed: Post "` + w.URL + `/convert?timeout=30s": `
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

// endpointClients starts an environment with the Endpoint definition
// converted by a pkg/webhook conversion webhook; it returns the v1 and v2
// clients and the webhook.
func endpointClients(t *testing.T) (*testenv.Env, dynamic.ResourceInterface, dynamic.ResourceInterface, *testenv.Webhook) {
	t.Helper()
	env := testenv.Start(t)
	client := dynamic.NewForConfigOrDie(env.Config)
	createCRD(t, client)
	w := env.ServeWebhook(t, webhook.ServeConversion(webhook.ConverterFunc(convertEndpoint)))
	env.RegisterConversion(t, "endpoints.net.example.com", w, "/convert")
	v1 := client.Resource(crdGV.WithResource("endpoints")).Namespace("default")
	v2 := client.Resource(schema.GroupVersionResource{Group: "net.example.com", Version: "v2", Resource: "endpoints"}).Namespace("default")
	return env, v1, v2, w
}

func specOf(t *testing.T, c dynamic.ResourceInterface, name string) map[string]any {
	t.Helper()
	got, err := c.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec, _, _ := unstructured.NestedMap(got.Object, "spec")
	return spec
}

func TestConversionOfPatchesAndApply(t *testing.T) {
	_, v1, v2, _ := endpointClients(t)
	ctx := context.Background()
	apply := []byte(`{"apiVersion":"net.example.com/v2","kind":"Endpoint","metadata":{"name":"db"},"spec":{"address":"db.local:5432"}}`)
	if _, err := v2.Patch(ctx, "db", types.ApplyPatchType, apply, metav1.PatchOptions{FieldManager: "tester"}); err != nil {
		t.Fatal(err)
	}
	if spec := specOf(t, v1, "db"); spec["host"] != "db.local" || spec["port"] != int64(5432) {
		t.Errorf("v1 read of a v2 apply: %v", spec)
	}
	if _, err := v2.Patch(ctx, "db", types.MergePatchType, []byte(`{"spec":{"address":"db2.local:5433"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if spec := specOf(t, v1, "db"); spec["host"] != "db2.local" || spec["port"] != int64(5433) {
		t.Errorf("v1 read of a v2 merge patch: %v", spec)
	}
	if _, err := v1.Patch(ctx, "db", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/port","value":6000}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if spec := specOf(t, v2, "db"); spec["address"] != "db2.local:6000" {
		t.Errorf("v2 read of a v1 JSON patch: %v", spec)
	}
}

// TestAdmissionSeesTheVersionItAskedFor registers a validating webhook for
// v2 only (matchPolicy Equivalent): a v1 create reaches it converted.
func TestAdmissionSeesTheVersionItAskedFor(t *testing.T) {
	env, v1, _, _ := endpointClients(t)
	seen := make(chan string, 4)
	guard := env.ServeWebhook(t, webhook.Serve(webhook.HandlerFunc(func(_ context.Context, r webhook.Request) webhook.Response {
		var u unstructured.Unstructured
		if err := r.DecodeObject(&u); err != nil {
			return webhook.Errored(400, err)
		}
		addr, _, _ := unstructured.NestedString(u.Object, "spec", "address")
		seen <- u.GetAPIVersion() + " " + addr + " " + r.Kind.Version
		return webhook.Allowed("")
	})))
	rule := testenv.Rule("endpoints.net.example.com", admissionregistrationv1.Create)
	rule.APIVersions = []string{"v2"}
	env.RegisterValidating(t, "v2-guard.example.com", guard, rule)
	db := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "net.example.com/v1", "kind": "Endpoint",
		"metadata": map[string]any{"name": "db"}, "spec": map[string]any{"host": "db.local", "port": int64(5432)}}}
	if _, err := v1.Create(context.Background(), db, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-seen:
		if got != "net.example.com/v2 db.local:5432 v2" {
			t.Errorf("the v2 webhook saw %q", got)
		}
	default:
		t.Fatal("the v2 webhook was not called")
	}
}

// TestStorageVersionMigration moves the storage version from v1 to v2: an
// object stored in v1 stays there (reads convert it) until a write, even
// one that changes nothing, stores it in v2.
func TestStorageVersionMigration(t *testing.T) {
	env, v1, v2, w := endpointClients(t)
	ctx := context.Background()
	db := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "net.example.com/v1", "kind": "Endpoint",
		"metadata": map[string]any{"name": "db"}, "spec": map[string]any{"host": "db.local", "port": int64(5432)}}}
	if _, err := v1.Create(ctx, db, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	client := dynamic.NewForConfigOrDie(env.Config)
	flip := []byte(`[{"op":"replace","path":"/spec/versions/0/storage","value":false},{"op":"replace","path":"/spec/versions/1/storage","value":true}]`)
	if _, err := client.Resource(crdRes).Patch(ctx, "endpoints.net.example.com", types.JSONPatchType, flip, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	current, err := v2.Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv := current.GetResourceVersion()
	migrated, err := v2.Update(ctx, current, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if migrated.GetResourceVersion() == rv {
		t.Fatalf("the no-op update did not rewrite the object stored in the old version")
	}
	w.Close()
	if spec := specOf(t, v2, "db"); spec["address"] != "db.local:5432" {
		t.Errorf("v2 read after migration: %v", spec)
	}
	if _, err := v1.Get(ctx, "db", metav1.GetOptions{}); err == nil || !strings.Contains(err.Error(), "conversion webhook for net.example.com/v2, Kind=Endpoint failed") {
		t.Errorf("v1 read of the migrated object with the webhook down: %v", err)
	}
	// Another no-op update changes nothing now.
	again, err := v2.Update(ctx, migrated, metav1.UpdateOptions{})
	if err != nil || again.GetResourceVersion() != migrated.GetResourceVersion() {
		t.Errorf("second no-op update: %v, resourceVersion %s -> %s", err, migrated.GetResourceVersion(), again.GetResourceVersion())
	}
}

// TestApplyConflictsAcrossVersions: the field manager converts between the
// versions of managedFields entries through the webhook, so an apply in v1
// that changes the address a v2 manager owns conflicts with it.
func TestApplyConflictsAcrossVersions(t *testing.T) {
	_, v1, v2, _ := endpointClients(t)
	ctx := context.Background()
	owner := []byte(`{"apiVersion":"net.example.com/v2","kind":"Endpoint","metadata":{"name":"db"},"spec":{"address":"db.local:5432"}}`)
	if _, err := v2.Patch(ctx, "db", types.ApplyPatchType, owner, metav1.PatchOptions{FieldManager: "owner"}); err != nil {
		t.Fatal(err)
	}
	other := []byte(`{"apiVersion":"net.example.com/v1","kind":"Endpoint","metadata":{"name":"db"},"spec":{"host":"elsewhere","port":5432}}`)
	_, err := v1.Patch(ctx, "db", types.ApplyPatchType, other, metav1.PatchOptions{FieldManager: "other"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "owner"`) || !strings.Contains(err.Error(), ".spec.address") {
		t.Errorf("v1 apply over a v2 owner's address = %v, want a conflict on .spec.address", err)
	}
}

// TestWatchEventThatCannotBeConverted: with the webhook down, a v2 watch
// ends with an ERROR event, the InternalError upstream's storage watcher
// sends for an event it cannot decode.
func TestWatchEventThatCannotBeConverted(t *testing.T) {
	_, v1, v2, w := endpointClients(t)
	ctx := context.Background()
	watcher, err := v2.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	w.Close()
	db := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "net.example.com/v1", "kind": "Endpoint",
		"metadata": map[string]any{"name": "db"}, "spec": map[string]any{"host": "db.local", "port": int64(5432)}}}
	if _, err := v1.Create(ctx, db, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-watcher.ResultChan():
		st, ok := ev.Object.(*metav1.Status)
		want := "Internal error occurred: conversion webhook for net.example.com/v1, Kind=Endpoint failed: Post "
		if ev.Type != watch.Error || !ok || st.Code != 500 || st.Reason != metav1.StatusReasonInternalError || !strings.HasPrefix(st.Message, want) {
			t.Errorf("event %s %#v, want an ERROR event %q", ev.Type, ev.Object, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
}
