package apiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/internal/registry"
)

// yamlValues are data values YAML writes in every style: wrapped when
// long, as literal blocks (with empty and indented lines), quoted when
// they would read as another type.
var yamlValues = []string{
	"plain",
	strings.Repeat("a long value with spaces that YAML folds past eighty columns ", 4),
	"two\nlines",
	"block\n\n  indented after an empty line\n\ttab\n",
	"trailing space \n",
	"true", "123", "- dash", "key: value", "#hash", "'quoted'", `"double"`, "ünïcödé ✓", "",
	strings.Repeat("x", 200),
}

// TestYAMLListIsTheWholeList: a list in YAML, written an item at a time by
// serveYAMLList, is byte for byte the whole list turned into YAML at once
// (listObjects, transformList, sigs.k8s.io/yaml), with and without limits,
// selectors and continue tokens, across storage pages.
func TestYAMLListIsTheWholeList(t *testing.T) {
	ts := newTestServer(t)
	res, queries := configMaps(t, ts), listQueries
	checkYAMLLists(t, ts, res, queries) // only kube-root-ca.crt
	for i := 0; i < listStreamPage+len(yamlValues); i++ {
		ts.must(http.StatusCreated, http.MethodPost, cmPath, mediaJSON, configMapOf(i, yamlValues[i%len(yamlValues)]))
	}
	checkYAMLLists(t, ts, res, queries)
}

// checkYAMLLists lists with each query, and follows one continue token.
func checkYAMLLists(t *testing.T, ts *testServer, res *registry.Resource, queries []string) {
	t.Helper()
	for _, query := range queries {
		if cont := checkYAMLList(t, ts, res, query); cont != "" {
			checkYAMLList(t, ts, res, query+"&continue="+url.QueryEscape(cont))
		}
	}
}

// checkYAMLList lists with query in YAML and checks the answer is the list
// turned into YAML at once at its resourceVersion; it returns the
// continue token.
func checkYAMLList(t *testing.T, ts *testServer, res *registry.Resource, query string) string {
	t.Helper()
	r, w := listAs(t, ts, mediaYAML, query, mediaYAML)
	var got listMeta
	if err := yaml.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("?%s: %v", query, err)
	}
	whole, _, items := wholeAnswer(t, ts, res, r, query, got.Metadata.ResourceVersion)
	want, err := yaml.Marshal(whole)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.Body.Bytes(), want) {
		t.Errorf("?%s: streamed YAML list differs from the whole list (%d items, %d vs %d bytes)\n%s", query, items, w.Body.Len(), len(want),
			firstDifference(w.Body.String(), string(want)))
	}
	return got.Metadata.Continue
}

// firstDifference shows where two texts part.
func firstDifference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(i-80, 0)
	return fmt.Sprintf("at byte %d:\n got …%.160q\nwant …%.160q", i, got[from:], want[from:])
}
