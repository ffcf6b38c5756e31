package openapi

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/admitd/admitd/internal/registry"
)

// upstreamPaths is kube-apiserver 1.37.2's rendering of a selection of
// paths in /openapi/v2 (with its shared parameters) and in the v3
// documents of api/v1 and apis/apps/v1 (with the meta schemas), recorded by
// record_paths.sh, whose PATHS and SCHEMAS are selectedPath and
// selectedSchema.
const upstreamPaths = "testdata/upstream/paths.json"

var (
	selectedPath   = regexp.MustCompile(`^/api/v1/(watch/)?(namespaces/\{namespace\}/)?configmaps(/\{name\})?$|^/api/v1/(watch/)?namespaces(/\{name\})?$|^/api/v1/(namespaces/\{namespace\}/(pods|services)|nodes)/\{name\}/proxy(/\{path\})?$|^/api/v1/namespaces/\{namespace\}/services/\{name\}$|^/api/v1/namespaces/\{namespace\}/pods/\{name\}/(log|eviction|binding|status)$|^/api/v1/namespaces/\{namespace\}/replicationcontrollers/\{name\}/scale$|^/api/v1/componentstatuses$|^/apis/apps/v1/(watch/)?(namespaces/\{namespace\}/)?deployments(/\{name\})?$`)
	selectedSchema = regexp.MustCompile(`^io\.k8s\.apimachinery\.pkg\.(apis\.meta\.v1\.(WatchEvent|DeleteOptions|Status)|runtime\.RawExtension)$`)
)

type pathsExcerpt struct {
	Parameters map[string]any `json:"parameters,omitempty"`
	Paths      map[string]any `json:"paths"`
	Schemas    map[string]any `json:"schemas,omitempty"`
}

type recordedPaths struct {
	V2 pathsExcerpt            `json:"v2"`
	V3 map[string]pathsExcerpt `json:"v3"`
}

func selected(all any, pattern *regexp.Regexp) map[string]any {
	out := map[string]any{}
	m, _ := all.(map[string]any)
	for k, v := range m {
		if pattern.MatchString(k) {
			out[k] = v
		}
	}
	return out
}

// TestPathsMatchKubeAPIServer compares, operation by operation, the
// recorded paths: the deprecated /watch/ paths and their WatchEvent,
// proxies with HEAD, OPTIONS and .../proxy/{path}, deletes that answer
// with the object (a Service; a Namespace's is published as a Status),
// subresources' name parameters (name of the Scale), pods/log's
// text/plain, a list without watch, bodies required but a delete's, the
// v2 document's shared parameters (#/parameters/pretty-tJGM1-ng), and the
// v3 documents' meta schemas, whose x-kubernetes-group-version-kind lists
// core/v1 and the document's group-version.
func TestPathsMatchKubeAPIServer(t *testing.T) {
	b, err := os.ReadFile(upstreamPaths)
	if err != nil {
		t.Fatal(err)
	}
	var want recordedPaths
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want.V2.Paths) < 25 || len(want.V2.Parameters) < 40 || len(want.V3) != 2 {
		t.Fatalf("%s has %d v2 paths, %d parameters and %d v3 documents; re-record it", upstreamPaths, len(want.V2.Paths), len(want.V2.Parameters), len(want.V3))
	}
	s := New(registry.NewCatalogue(), Options{})
	v2 := fetchJSON(t, s, "/openapi/v2")
	compareMaps(t, "path", selected(v2["paths"], selectedPath), want.V2.Paths)
	params, _ := v2["parameters"].(map[string]any)
	compareMaps(t, "parameter", params, want.V2.Parameters)
	for doc, w := range want.V3 {
		v3 := fetchJSON(t, s, "/openapi/v3/"+doc)
		compareMaps(t, "v3 "+doc+" path", selected(v3["paths"], selectedPath), w.Paths)
		components, _ := v3["components"].(map[string]any)
		compareMaps(t, "v3 "+doc+" schema", selected(components["schemas"], selectedSchema), w.Schemas)
	}
}
