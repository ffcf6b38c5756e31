package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// copyBomb is a JSON patch of one add and n copies of the annotations into
// themselves: each copy doubles the document.
func copyBomb(n int) string {
	ops := []map[string]any{{"op": "add", "path": "/metadata/annotations", "value": map[string]string{"z": strings.Repeat("x", 1000)}}}
	for i := range n {
		ops = append(ops, map[string]any{"op": "copy", "from": "/metadata/annotations", "path": fmt.Sprintf("/metadata/annotations/k%d", i)})
	}
	b, _ := json.Marshal(ops)
	return string(b)
}

// A JSON patch's copies may add at most 3 MiB, as upstream's
// JSONPatchMaxCopyBytes: the 16-copy bomb (64 MiB if applied) stops at the
// bound and is upstream's short 422 (its message is the generic one: the
// copy error is not in it), and the object is unchanged.
func TestJSONPatchCopiesAreBounded(t *testing.T) {
	ts := newTestServer(t)
	const path = "/api/v1/namespaces/default/configmaps/c"
	ts.must(201, "POST", "/api/v1/namespaces/default/configmaps", "", `{"metadata":{"name":"c"},"data":{"a":"1"}}`)
	p, err := jsonpatch.DecodePatch([]byte(copyBomb(16)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Apply([]byte(`{"metadata":{}}`))
	var copyErr *jsonpatch.AccumulatedCopySizeError
	if !errors.As(err, &copyErr) || !strings.Contains(err.Error(), fmt.Sprintf("exceeding the limit %d", 3*1024*1024)) {
		t.Fatalf("applying the 16-copy patch after New: %v, want the 3 MiB copy bound's error", err)
	}
	w := ts.do("PATCH", path, mediaJSONPatch, copyBomb(16))
	if w.Code != 422 || !strings.Contains(w.Body.String(), `"reason":"Invalid"`) || w.Body.Len() > 4096 {
		t.Fatalf("16-copy patch = %d %.300s (%d bytes), want a short 422", w.Code, w.Body, w.Body.Len())
	}
	if got := ts.do("GET", path, "", ""); strings.Contains(got.Body.String(), "annotations") {
		t.Errorf("the refused patch changed the object: %s", got.Body)
	}
	// A copy under the bound still applies.
	small := `[{"op":"add","path":"/metadata/annotations","value":{"z":"x"}},{"op":"copy","from":"/metadata/annotations/z","path":"/metadata/annotations/k"}]`
	if w := ts.do("PATCH", path, mediaJSONPatch, small); w.Code != 200 || !strings.Contains(w.Body.String(), `"k":"x"`) {
		t.Errorf("small copy patch = %d %.300s, want 200", w.Code, w.Body)
	}
}
