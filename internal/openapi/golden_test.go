package openapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/internal/registry"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// goldenCase is testdata/<case>/case.yaml: what to record of which
// documents. The recorded parts are v3.json and v2.json next to it.
type goldenCase struct {
	GroupVersion string   `json:"groupVersion"` // the v3 document: api/v1, apis/apps/v1
	CRD          string   `json:"crd"`          // a CustomResourceDefinition to serve, if any
	Models       []string `json:"models"`       // schemas to record
	Paths        []string `json:"paths"`        // paths to record
}

func TestGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/*/case.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, file := range cases {
		dir := filepath.Dir(file)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var c goldenCase
			readYAML(t, file, &c)
			cat := registry.NewCatalogue()
			if c.CRD != "" {
				var crd apiextensionsv1.CustomResourceDefinition
				readYAML(t, filepath.Join(dir, c.CRD), &crd)
				cat.SetCustom(crd.Name, registry.CustomResources(&crd))
			}
			s := New(cat, Options{})
			v3 := fetchJSON(t, s, "/openapi/v3/"+c.GroupVersion)
			v2 := fetchJSON(t, s, "/openapi/v2")
			compareGolden(t, filepath.Join(dir, "v3.json"), record(t, v3, v3["components"].(map[string]any)["schemas"], c))
			compareGolden(t, filepath.Join(dir, "v2.json"), record(t, v2, v2["definitions"], c))
		})
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func fetchJSON(t *testing.T, s *Service, path string) map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Accept", "application/json")
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s = %d, want 200: %s", path, rec.Code, rec.Body)
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return doc
}

// record picks the case's models and paths out of a document.
func record(t *testing.T, doc map[string]any, schemas any, c goldenCase) []byte {
	t.Helper()
	out := map[string]map[string]any{"schemas": {}, "paths": {}}
	for _, m := range c.Models {
		s, ok := schemas.(map[string]any)[m]
		if !ok {
			t.Errorf("document has no schema %s", m)
		}
		out["schemas"][m] = s
	}
	for _, p := range c.Paths {
		v, ok := doc["paths"].(map[string]any)[p]
		if !ok {
			t.Errorf("document has no path %s", p)
		}
		out["paths"][p] = v
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the generated document (run go test -update and review the diff):\n%s", path, firstDifference(got, want))
	}
}

func firstDifference(got, want []byte) string {
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range min(len(gl), len(wl)) {
		if !bytes.Equal(gl[i], wl[i]) {
			return "line " + strconv.Itoa(i+1) + ":\n got  " + string(gl[i]) + "\n want " + string(wl[i])
		}
	}
	return "lengths differ"
}
