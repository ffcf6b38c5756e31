package storageversionmigrator

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// harness is an in-process API server over memory storage with the
// migrator running as its service account, and an admin client.
type harness struct {
	t     *testing.T
	store storage.Store
	cat   *registry.Catalogue
	admin dynamic.Interface
}

var admin = authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters", "system:authenticated"}}

// newHarness starts the server and the controller; now, when set, is the
// controller's clock.
func newHarness(t *testing.T, now func() time.Time) *harness {
	t.Helper()
	store, cat := memory.New(), registry.NewCatalogue()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	api := apiserver.New(apiserver.Config{Store: store, Catalogue: cat, Admission: admission.NewChain(),
		Observers: []apiserver.WriteObserver{apiserver.CustomResourceSync(store, cat, log)}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := api.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	client := func(user authenticationv1.UserInfo) dynamic.Interface {
		c, err := controllers.NewClient(api.Loopback(user))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := New(store, cat, client(User), log)
	if now != nil {
		c.now = now
	}
	go c.Run(ctx)
	return &harness{t: t, store: store, cat: cat, admin: client(admin)}
}

func (h *harness) create(gvr schema.GroupVersionResource, namespace string, obj map[string]any) *unstructured.Unstructured {
	h.t.Helper()
	out, err := h.admin.Resource(gvr).Namespace(namespace).Create(h.t.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatalf("creating %v: %v", gvr, err)
	}
	return out
}

func (h *harness) migrate(name, group, resource string) {
	h.t.Helper()
	h.create(migrationsGVR, "", map[string]any{"apiVersion": "storagemigration.k8s.io/v1", "kind": "StorageVersionMigration",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"resource": map[string]any{"group": group, "resource": resource}}})
}

// waitEnded waits until the migration is Succeeded or Failed and no longer
// Running, and returns it.
func (h *harness) waitEnded(name string) *storagemigrationv1.StorageVersionMigration {
	h.t.Helper()
	var m storagemigrationv1.StorageVersionMigration
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		u, err := h.admin.Resource(migrationsGVR).Get(h.t.Context(), name, metav1.GetOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		m = storagemigrationv1.StorageVersionMigration{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m); err != nil {
			h.t.Fatal(err)
		}
		if isTerminal(&m) && apimeta.IsStatusConditionFalse(m.Status.Conditions, string(storagemigrationv1.MigrationRunning)) {
			return &m
		}
	}
	h.t.Fatalf("migration %s did not end: %+v", name, m.Status)
	return nil
}

// conditions are a migration's conditions as "Type=Status Reason: message".
func conditions(m *storagemigrationv1.StorageVersionMigration) []string {
	var out []string
	for _, c := range m.Status.Conditions {
		out = append(out, string(c.Type)+"="+string(c.Status)+" "+c.Reason+": "+c.Message)
	}
	return out
}

var widgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

func widgetsDefinition(storage string) map[string]any {
	version := func(name string) map[string]any {
		return map[string]any{"name": name, "served": true, "storage": name == storage,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
	}
	return map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
			"names":    map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{version("v1beta1"), version("v1")}}}
}

// storedAPIVersion is the apiVersion a custom resource is stored in.
func (h *harness) storedAPIVersion(namespace, name string) string {
	h.t.Helper()
	res, _ := h.cat.Lookup(widgetsGVR)
	kv, err := h.store.Get(h.t.Context(), layout.Key(res, namespace, name))
	if err != nil {
		h.t.Fatal(err)
	}
	var obj struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(kv.Value, &obj); err != nil {
		h.t.Fatal(err)
	}
	return obj.APIVersion
}

// waitServed waits until the catalogue serves gvr.
func (h *harness) waitServed(gvr schema.GroupVersionResource) {
	h.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, ok := h.cat.Lookup(gvr); ok {
			return
		}
	}
	h.t.Fatalf("%v is not served", gvr)
}
