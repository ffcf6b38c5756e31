package openapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"

	"github.com/admitd/admitd/internal/registry"
)

func get(s http.Handler, path, accept string, header ...string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	s.ServeHTTP(rec, req)
	return rec
}

func index(t *testing.T, s *Service) map[string]string {
	t.Helper()
	rec := get(s, "/openapi/v3", "application/json, */*")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /openapi/v3 = %d, want 200", rec.Code)
	}
	var idx struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &idx); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for gv, p := range idx.Paths {
		out[gv] = p.ServerRelativeURL
	}
	return out
}

func crontabCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "stable.example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "crontabs", Kind: "CronTab"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object"}},
				}},
			}},
		},
	}
}

func TestIndexAndGroupVersionDocuments(t *testing.T) {
	cat := registry.NewCatalogue()
	s := New(cat, Options{})
	idx := index(t, s)
	for _, g := range cat.Groups() {
		for _, v := range cat.Versions(g) {
			p := gvPath(schema.GroupVersion{Group: g, Version: v})
			u, ok := idx[p]
			if !ok {
				t.Errorf("index lacks %s", p)
				continue
			}
			rec := get(s, u, "application/json")
			if rec.Code != http.StatusOK {
				t.Errorf("GET %s = %d, want 200", u, rec.Code)
				continue
			}
			hash := u[strings.Index(u, "hash=")+len("hash="):]
			if etag := rec.Header().Get("Etag"); etag != strconv.Quote(hash) {
				t.Errorf("GET %s: Etag %s, want the index hash %q", u, etag, hash)
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "public, immutable" {
				t.Errorf("GET %s: Cache-Control %q, want public, immutable", u, cc)
			}
		}
	}
}

func TestConditionalAndStaleRequests(t *testing.T) {
	s := New(registry.NewCatalogue(), Options{})
	u := index(t, s)["apis/apps/v1"]
	etag := get(s, u, "application/json").Header().Get("Etag")
	if rec := get(s, u, "application/json", "If-None-Match", etag); rec.Code != http.StatusNotModified {
		t.Errorf("GET with If-None-Match = %d, want 304", rec.Code)
	}
	if rec := get(s, "/openapi/v3/apis/apps/v1?hash=STALE", "application/json"); rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != u {
		t.Errorf("GET with a stale hash = %d to %q, want 301 to %q", rec.Code, rec.Header().Get("Location"), u)
	}
	for _, p := range []string{"/openapi/v3/apis/nope/v1", "/openapi/v3/apis/nope", "/openapi/v3/apis/apps/v1/deployments", "/openapi/v4"} {
		if rec := get(s, p, "application/json"); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, rec.Code)
		}
	}
	if rec := get(s, u, "text/plain"); rec.Code != http.StatusNotAcceptable {
		t.Errorf("GET %s as text/plain = %d, want 406", u, rec.Code)
	}
}

func TestCustomResourcesRebuildOnlyTheirGroupVersion(t *testing.T) {
	cat := registry.NewCatalogue()
	s := New(cat, Options{})
	before := index(t, s)
	apps := s.docs["apis/apps/v1"]

	cat.SetCustom("crontabs.stable.example.com", registry.CustomResources(crontabCRD()))
	after := index(t, s)
	if _, ok := after["apis/stable.example.com/v1"]; !ok {
		t.Fatalf("index after creating a CRD lacks apis/stable.example.com/v1: %v", after)
	}
	if after["apis/apps/v1"] != before["apis/apps/v1"] || s.docs["apis/apps/v1"] != apps {
		t.Errorf("apps/v1 was rebuilt although its resources did not change")
	}
	rec := get(s, after["apis/stable.example.com/v1"], "application/json")
	var doc spec3.OpenAPI
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Components.Schemas["com.example.stable.v1.CronTab"]; !ok {
		t.Errorf("custom document lacks com.example.stable.v1.CronTab")
	}

	cat.SetCustom("crontabs.stable.example.com", nil)
	if _, ok := index(t, s)["apis/stable.example.com/v1"]; ok {
		t.Errorf("index still lists apis/stable.example.com/v1 after the CRD was removed")
	}
}

// TestPatchOperations checks what kubectl's field-validation check and
// client-side apply look for: per kind a patch operation carrying the
// group-version-kind and fieldValidation, accepting strategic merge patch
// for built-in kinds only.
func TestPatchOperations(t *testing.T) {
	cat := registry.NewCatalogue()
	cat.SetCustom("crontabs.stable.example.com", registry.CustomResources(crontabCRD()))
	s := New(cat, Options{})
	docs := map[string]*spec3.OpenAPI{}
	for gv, u := range index(t, s) {
		var doc spec3.OpenAPI
		if err := json.Unmarshal(get(s, u, "application/json").Body.Bytes(), &doc); err != nil {
			t.Fatalf("%s: %v", gv, err)
		}
		docs[gv] = &doc
	}
	for _, res := range cat.Resources() {
		if !res.HasVerb("patch") {
			continue
		}
		op := findPatch(docs[gvPath(res.GroupVersion())], res)
		if op == nil {
			t.Errorf("%s: no patch operation with x-kubernetes-group-version-kind %s", res.GroupVersionResource, res.GroupVersionKind())
			continue
		}
		if !slices.ContainsFunc(op.Parameters, func(p *spec3.Parameter) bool { return p.Name == "fieldValidation" && p.In == "query" }) {
			t.Errorf("%s: patch operation lacks the fieldValidation query parameter", res.GroupVersionResource)
		}
		_, smp := op.RequestBody.Content["application/strategic-merge-patch+json"]
		if smp == res.Unstructured {
			t.Errorf("%s: patch accepts strategic merge patch = %v, want %v", res.GroupVersionResource, smp, !res.Unstructured)
		}
	}
}

func findPatch(doc *spec3.OpenAPI, res *registry.Resource) *spec3.Operation {
	if doc == nil {
		return nil
	}
	for path, p := range doc.Paths.Paths {
		if p.Patch == nil || strings.Count(path, "/") != strings.Count(anyItemPath(res), "/") {
			continue
		}
		gvk, _ := p.Patch.Extensions[gvkExtension].(map[string]any)
		if gvk["group"] == res.Group && gvk["version"] == res.Version && gvk["kind"] == res.Kind {
			return p.Patch
		}
	}
	return nil
}

func anyItemPath(res *registry.Resource) string {
	p := "/" + gvPath(res.GroupVersion())
	if res.Namespaced {
		p += "/namespaces/{namespace}"
	}
	return p + "/" + res.Resource + "/{name}"
}

func TestV2ProtobufAndJSON(t *testing.T) {
	s := New(registry.NewCatalogue(), Options{})
	for _, accept := range []string{
		"application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
		"application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
	} {
		rec := get(s, "/openapi/v2", accept)
		if ct := rec.Header().Get("Content-Type"); rec.Code != http.StatusOK || ct != mediaV2Protobuf {
			t.Fatalf("GET /openapi/v2 (%s) = %d %q, want 200 %q", accept, rec.Code, ct, mediaV2Protobuf)
		}
		var doc openapi_v2.Document
		if err := proto.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatalf("decoding the protobuf document: %v", err)
		}
		if doc.Swagger != "2.0" || len(doc.Definitions.AdditionalProperties) < 100 {
			t.Errorf("protobuf document: swagger %q with %d definitions", doc.Swagger, len(doc.Definitions.AdditionalProperties))
		}
		if rec := get(s, "/openapi/v2", accept, "If-None-Match", rec.Header().Get("Etag")); rec.Code != http.StatusNotModified {
			t.Errorf("GET /openapi/v2 with If-None-Match = %d, want 304", rec.Code)
		}
	}
	rec := get(s, "/openapi/v2", "application/json")
	var doc map[string]any
	if rec.Header().Get("Content-Type") != mediaJSON || json.Unmarshal(rec.Body.Bytes(), &doc) != nil || doc["swagger"] != "2.0" {
		t.Errorf("GET /openapi/v2 as JSON = %d %q, not a swagger 2.0 document", rec.Code, rec.Header().Get("Content-Type"))
	}
	if strings.Contains(rec.Body.String(), v3RefPrefix) {
		t.Errorf("v2 document refers to %s", v3RefPrefix)
	}
	for name, def := range doc["definitions"].(map[string]any) {
		if hasDefault(def) {
			t.Errorf("v2 definition %s keeps a default (upstream prunes them)", name)
		}
	}
}

// hasDefault reports whether a decoded schema has a default anywhere
// (properties named "default" excepted).
func hasDefault(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, sub := range m {
		switch k {
		case "default":
			return true
		case "properties", "patternProperties", "definitions":
			for _, p := range sub.(map[string]any) {
				if hasDefault(p) {
					return true
				}
			}
		default:
			if hasDefault(sub) {
				return true
			}
			if list, ok := sub.([]any); ok && slices.ContainsFunc(list, hasDefault) {
				return true
			}
		}
	}
	return false
}

// TestEveryRefResolves checks every document's invariant: each $ref names
// a schema of the same document.
func TestEveryRefResolves(t *testing.T) {
	cat := registry.NewCatalogue()
	cat.SetCustom("crontabs.stable.example.com", registry.CustomResources(crontabCRD()))
	s := New(cat, Options{ServiceAccountIssuerDiscovery: true})
	check := func(where string, doc map[string]any, prefix string, defs map[string]any) {
		params, _ := doc["parameters"].(map[string]any) // v2's shared parameters
		for _, ref := range refs(doc) {
			if name, ok := strings.CutPrefix(ref, "#/parameters/"); ok && params[name] != nil {
				continue
			}
			name, ok := strings.CutPrefix(ref, prefix)
			if _, defined := defs[name]; !ok || !defined {
				t.Errorf("%s: $ref %s does not resolve", where, ref)
			}
		}
	}
	for gv, u := range index(t, s) {
		var doc map[string]any
		if err := json.Unmarshal(get(s, u, "application/json").Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		schemas, _ := doc["components"].(map[string]any)["schemas"].(map[string]any)
		check(gv, doc, v3RefPrefix, schemas)
	}
	var v2 map[string]any
	if err := json.Unmarshal(get(s, "/openapi/v2", "application/json").Body.Bytes(), &v2); err != nil {
		t.Fatal(err)
	}
	check("v2", v2, v2RefPrefix, v2["definitions"].(map[string]any))
}

func refs(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if r, ok := sub.(string); ok && k == "$ref" {
				out = append(out, r)
			}
			out = append(out, refs(sub)...)
		}
	case []any:
		for _, sub := range v {
			out = append(out, refs(sub)...)
		}
	}
	return out
}
