package openapi

import (
	"encoding/json"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"

	"github.com/admitd/admitd/internal/registry"
)

// upstreamV2Discovery is kube-apiserver 1.37.2's /openapi/v2 cut down to
// the paths of discovery endpoints and the definitions they refer to,
// recorded by record_v2.sh (whose jq filter selects the paths this
// package's discoveryV2Path selects).
const upstreamV2Discovery = "testdata/upstream/v2_discovery.json"

// v2Excerpt is the part of a v2 document the comparison covers.
type v2Excerpt struct {
	Paths       map[string]map[string]any `json:"paths"`
	Definitions map[string]any            `json:"definitions"`
}

var discoveryV2Path = regexp.MustCompile(`^/(api|apis|version|\.well-known/openid-configuration|openid/v1/jwks)/$|^/api/v1/$|^/apis/[^/]+/([^/]+/)?$`)

// excerptV2 selects the discovery paths of a decoded v2 document and every
// definition they refer to, directly or through other definitions.
func excerptV2(t *testing.T, doc map[string]any) v2Excerpt {
	t.Helper()
	out := v2Excerpt{Paths: map[string]map[string]any{}, Definitions: map[string]any{}}
	defs, _ := doc["definitions"].(map[string]any)
	var pending []string
	for p, item := range doc["paths"].(map[string]any) {
		if discoveryV2Path.MatchString(p) {
			out.Paths[p] = item.(map[string]any)
			pending = append(pending, refs(item)...)
		}
	}
	for len(pending) > 0 {
		name := strings.TrimPrefix(pending[0], v2RefPrefix)
		pending = pending[1:]
		if _, seen := out.Definitions[name]; seen {
			continue
		}
		def, ok := defs[name]
		if !ok {
			t.Errorf("v2 document refers to %s, which it does not define", name)
			continue
		}
		out.Definitions[name] = def
		pending = append(pending, refs(def)...)
	}
	return out
}

// TestV2DiscoveryPathsMatchKubeAPIServer compares the discovery paths of
// /openapi/v2 (operations, parameters, media types, responses) and the
// definitions they refer to with kube-apiserver's, path by path and
// definition by definition.
func TestV2DiscoveryPathsMatchKubeAPIServer(t *testing.T) {
	b, err := os.ReadFile(upstreamV2Discovery)
	if err != nil {
		t.Fatal(err)
	}
	var want v2Excerpt
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want.Paths) < 10 || len(want.Definitions) < 5 {
		t.Fatalf("%s has %d paths and %d definitions; re-record it", upstreamV2Discovery, len(want.Paths), len(want.Definitions))
	}
	s := New(registry.NewCatalogue(), Options{ServiceAccountIssuerDiscovery: true})
	got := excerptV2(t, fetchJSON(t, s, "/openapi/v2"))
	compareMaps(t, "path", got.Paths, want.Paths)
	compareMaps(t, "definition", got.Definitions, want.Definitions)
	checkV2ProtobufOperations(t, s, want)
}

// checkV2ProtobufOperations checks that the gnostic protobuf form of
// /openapi/v2 has kube-apiserver's discovery operations too, with their
// ids and media types.
func checkV2ProtobufOperations(t *testing.T, s *Service, want v2Excerpt) {
	t.Helper()
	var doc openapi_v2.Document
	if err := proto.Unmarshal(get(s, "/openapi/v2", mediaV2Protobuf).Body.Bytes(), &doc); err != nil {
		t.Fatalf("decoding the protobuf document: %v", err)
	}
	ops := map[string]*openapi_v2.Operation{}
	for _, item := range doc.GetPaths().GetPath() {
		ops[item.Name] = item.GetValue().GetGet()
	}
	for p, item := range want.Paths {
		op, _ := item["get"].(map[string]any)
		got := ops[p]
		if got == nil {
			t.Errorf("protobuf v2 document lacks GET %s", p)
			continue
		}
		if got.OperationId != op["operationId"] || !sameStrings(got.Consumes, op["consumes"]) || !sameStrings(got.Produces, op["produces"]) {
			t.Errorf("protobuf v2 GET %s = %s consuming %v producing %v, want %v", p, got.OperationId, got.Consumes, got.Produces, op)
		}
	}
}

// sameStrings compares a protobuf string list with a decoded JSON one
// (nil when absent).
func sameStrings(got []string, want any) bool {
	list, _ := want.([]any)
	if len(got) != len(list) {
		return false
	}
	for i, w := range list {
		if got[i] != w {
			return false
		}
	}
	return true
}

// compareMaps reports the keys only one side has and, key by key, the
// values that differ.
func compareMaps[V any](t *testing.T, what string, got, want map[string]V) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[k]
		if !ok {
			t.Errorf("v2 %s %s is missing", what, k)
			continue
		}
		if !reflect.DeepEqual(g, want[k]) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(want[k])
			t.Errorf("v2 %s %s differs from kube-apiserver's:\n got  %s\n want %s", what, k, gb, wb)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("v2 %s %s is not kube-apiserver's", what, k)
		}
	}
}

// TestV2DiscoveryPathsFollowTheSettings: the OpenID paths are published
// only when served, and a custom resource's group gets no /apis/<group>/
// (apiextensions-apiserver publishes none).
func TestV2DiscoveryPathsFollowTheSettings(t *testing.T) {
	cat := registry.NewCatalogue()
	cat.SetCustom("crontabs.stable.example.com", registry.CustomResources(crontabCRD()))
	paths := fetchJSON(t, New(cat, Options{}), "/openapi/v2")["paths"].(map[string]any)
	for _, p := range []string{"/.well-known/openid-configuration/", "/openid/v1/jwks/", "/apis/stable.example.com/"} {
		if _, ok := paths[p]; ok {
			t.Errorf("v2 document has %s", p)
		}
	}
	for _, p := range []string{"/api/", "/apis/", "/apis/apps/", "/version/"} {
		if _, ok := paths[p]; !ok {
			t.Errorf("v2 document lacks %s", p)
		}
	}
}
