package openapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/admitd/admitd/internal/registry"
)

// TestV2MergedWithExtensionServers: an extension server's paths and
// definitions join the local document; a definition whose name is taken
// by another schema is renamed and referred to by its new name; a local
// path is kept as it is; the merged document is built again only when the
// key changes, and is served as protobuf too.
func TestV2MergedWithExtensionServers(t *testing.T) {
	s := New(registry.NewCatalogue(), Options{})
	var remote spec.Swagger
	if err := json.Unmarshal([]byte(`{"swagger":"2.0","info":{"title":"wardle","version":"v0"},"paths":{
		"/apis/wardle.example.com/v1alpha1/flunders":{"get":{"operationId":"listFlunder","responses":{"200":{"description":"OK","schema":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status"}}}}},
		"/api/v1/namespaces":{"get":{"operationId":"stolen","responses":{"200":{"description":"OK"}}}}},
		"definitions":{"io.k8s.apimachinery.pkg.apis.meta.v1.Status":{"type":"object","description":"not upstream's Status"},
		"io.wardle.Flunder":{"type":"object"}}}`), &remote); err != nil {
		t.Fatal(err)
	}
	merged := func(key, accept string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/openapi/v2", nil)
		r.Header.Set("Accept", accept)
		s.ServeV2Merged(rec, r, []*spec.Swagger{&remote}, key)
		return rec
	}
	rec := merged("k1", "application/json")
	var doc spec.Swagger
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &doc) != nil {
		t.Fatalf("GET /openapi/v2 merged = %d", rec.Code)
	}
	flunders, ok := doc.Paths.Paths["/apis/wardle.example.com/v1alpha1/flunders"]
	if !ok {
		t.Fatal("the extension server's path is missing")
	}
	ref := flunders.Get.Responses.StatusCodeResponses[200].Schema.Ref.String()
	if ref == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status" {
		t.Errorf("the conflicting definition was not renamed: %s", ref)
	} else if _, ok := doc.Definitions[ref[len("#/definitions/"):]]; !ok {
		t.Errorf("the renamed definition %s is missing", ref)
	}
	if doc.Definitions["io.k8s.apimachinery.pkg.apis.meta.v1.Status"].Description == "not upstream's Status" {
		t.Error("the local Status definition was replaced")
	}
	if _, ok := doc.Definitions["io.wardle.Flunder"]; !ok {
		t.Error("the extension server's definition is missing")
	}
	if op := doc.Paths.Paths["/api/v1/namespaces"].Get; op == nil || op.ID == "stolen" {
		t.Error("a local path was replaced by the extension server's")
	}
	if again := merged("k1", "application/json"); again.Header().Get("Etag") != rec.Header().Get("Etag") {
		t.Error("the same key built another document")
	}
	pb := merged("k1", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	var pdoc openapi_v2.Document
	if err := proto.Unmarshal(pb.Body.Bytes(), &pdoc); err != nil || pdoc.Paths == nil {
		t.Errorf("protobuf merged document: %v", err)
	}
	plain := httptest.NewRecorder()
	s.ServeHTTP(plain, httptest.NewRequest("GET", "/openapi/v2", nil))
	if plain.Header().Get("Etag") == rec.Header().Get("Etag") {
		t.Error("the local document includes the extension server's")
	}
}
