package apiserver

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

const widgetsCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced",
"names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
"versions":[{"name":"v1","served":true,"storage":true,
"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

// TestCustomResourcesFollowOtherServers: a definition created and deleted
// through one server changes what another server over the same store
// serves, through the watch of CustomResources.Run.
func TestCustomResourcesFollowOtherServers(t *testing.T) {
	store := memory.New()
	first := New(testConfig(store, registry.NewCatalogue()))
	if err := first.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: first}
	other := registry.NewCatalogue()
	go NewCustomResources(store, other, slog.Default()).Run(t.Context())
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	served := func() bool { _, ok := other.Lookup(widgets); return ok }

	ts.must(http.StatusCreated, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", widgetsCRD)
	waitFor(t, served, "the other server serves widgets")
	ts.must(http.StatusOK, http.MethodDelete, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", "", "")
	waitFor(t, func() bool { return !served() }, "the other server stops serving widgets")
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
