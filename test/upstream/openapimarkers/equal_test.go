package openapimarkers

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	builderutil "k8s.io/kube-openapi/pkg/builder3/util"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/admitd/admitd/internal/openapi"
	"github.com/admitd/admitd/internal/registry"
)

// knownDifferences are the definitions allowed to differ from upstream's,
// with the reason; "v2 " or "v3 " and the model name.
var knownDifferences = map[string]string{}

// TestDefinitionsMatchKubeAPIServer compares every k8s.io/api definition
// of admitd's /openapi/v2 document and of every /openapi/v3 document with
// kube-apiserver's: upstream's generated definition after the builders'
// processing (v3: the embedded v2 form dropped, refs with siblings wrapped
// in allOf; v2: the embedded v2 form taken, defaults pruned), the
// x-kubernetes-group-version-kind extension aside (TestPathsMatchKubeAPIServer
// in internal/openapi checks it against the real server).
func TestDefinitionsMatchKubeAPIServer(t *testing.T) {
	s := openapi.New(registry.NewCatalogue(), openapi.Options{})
	v3Upstream, v2Upstream := upstreamDefinitions(v3RefPrefix), upstreamDefinitions(v2RefPrefix)
	compared, differing := 0, map[string]bool{}
	compare := func(key, name string, got any, want spec.Schema) {
		compared++
		g, w := asObject(got), asMap(t, want)
		delete(g, "x-kubernetes-group-version-kind")
		if reflect.DeepEqual(g, w) {
			return
		}
		differing[key] = true
		if _, known := knownDifferences[key]; !known {
			t.Errorf("%s differs from kube-apiserver's:\n%s", key, describe(g, w))
		}
	}
	v2 := fetch(t, s, "/openapi/v2")
	for name, got := range asObject(v2["definitions"]) {
		if d, ok := v2Upstream[name]; ok && strings.HasPrefix(name, "io.k8s.api.") {
			compare("v2 "+name, name, got, *pruneDefaults.WalkSchema(ptr(v2Form(d))))
		}
	}
	v2Count := compared
	index, err := s.IndexPaths()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range slices.Sorted(maps.Keys(index)) {
		doc := fetch(t, s, "/openapi/v3/"+p)
		for name, got := range asObject(asObject(doc["components"])["schemas"]) {
			if d, ok := v3Upstream[name]; ok && strings.HasPrefix(name, "io.k8s.api.") {
				compare("v3 "+name, name, got, *builderutil.WrapRefs(ptr(v3Form(d))))
			}
		}
	}
	if v2Count < 500 || compared-v2Count < 500 {
		t.Errorf("compared %d v2 and %d v3 definitions, want at least 500 each", v2Count, compared-v2Count)
	}
	for key := range knownDifferences {
		if !differing[key] {
			t.Errorf("%s is listed as a known difference but equals kube-apiserver's", key)
		}
	}
	t.Logf("compared %d v2 definitions and %d in %d v3 documents; %d differ", v2Count, compared-v2Count, len(index), len(differing))
}

// pruneDefaults drops defaults, as kube-apiserver's v2 document does.
var pruneDefaults = schemamutation.Walker{
	SchemaCallback: func(s *spec.Schema) *spec.Schema {
		if s.Default == nil {
			return s
		}
		c := *s
		c.Default = nil
		return &c
	},
	RefCallback: schemamutation.RefCallbackNoop,
}

func ptr[T any](v T) *T { return &v }

func fetch(t *testing.T, s http.Handler, path string) map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Accept", "application/json")
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s = %d, want 200", path, rec.Code)
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return doc
}

// describe lists the differing top-level keys and properties.
func describe(got, want map[string]any) string {
	var b strings.Builder
	for _, k := range keys(got, want) {
		if k == "properties" || reflect.DeepEqual(got[k], want[k]) {
			continue
		}
		g, _ := json.Marshal(got[k])
		w, _ := json.Marshal(want[k])
		b.WriteString(" " + k + ":\n  got  " + string(g) + "\n  want " + string(w) + "\n")
	}
	gp, wp := asObject(got["properties"]), asObject(want["properties"])
	for _, p := range keys(gp, wp) {
		if !reflect.DeepEqual(gp[p], wp[p]) {
			g, _ := json.Marshal(gp[p])
			w, _ := json.Marshal(wp[p])
			b.WriteString(" properties." + p + ":\n  got  " + string(g) + "\n  want " + string(w) + "\n")
		}
	}
	return b.String()
}
