package apiserver

import (
	"strings"
	"testing"
)

// ownerReferences repeated exactly are stored once, with upstream's
// warning; entries that share a UID but differ are kept.
func TestDuplicateOwnerReferences(t *testing.T) {
	ts := newTestServer(t)
	ref := `{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"u1"}`
	other := `{"apiVersion":"v1","kind":"Secret","name":"owner","uid":"u1"}`
	body := func(refs ...string) string {
		return `{"metadata":{"name":"c","ownerReferences":[` + strings.Join(refs, ",") + `]}}`
	}
	w := ts.do("POST", cmPath, mediaJSON, body(ref, ref, other))
	const warning = `.metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: u1`
	if w.Code != 201 || !strings.Contains(w.Header().Get("Warning"), warning) || strings.Count(w.Body.String(), `"uid":"u1"`) != 2 {
		t.Errorf("create with a repeated owner = %d %s (warning %q), want 201 with two owners and upstream's warning", w.Code, w.Body, w.Header().Get("Warning"))
	}
	w = ts.do("PUT", cmPath+"/c", mediaJSON, body(other, other))
	if w.Code != 200 || !strings.Contains(w.Header().Get("Warning"), warning) || strings.Count(w.Body.String(), `"uid":"u1"`) != 1 {
		t.Errorf("update with a repeated owner = %d %s, want 200 with one owner and the warning", w.Code, w.Body)
	}
}
