package apiserver

import "testing"

// A Terminating namespace stays through updates (a label, its status)
// while its spec.finalizers are not empty: only the finalize subresource's
// removal of the last one lets it go, as upstream's
// ShouldDeleteNamespaceDuringUpdate.
func TestUpdateOfATerminatingNamespaceKeepsIt(t *testing.T) {
	ts := newTestServer(t)
	const path = "/api/v1/namespaces/team"
	ts.must(201, "POST", "/api/v1/namespaces", "", `{"metadata":{"name":"team"}}`)
	ts.must(200, "DELETE", path, "", "")
	ts.must(200, "PATCH", path, "application/merge-patch+json", `{"metadata":{"labels":{"a":"b"}}}`)
	ts.must(200, "PATCH", path+"/status", "application/merge-patch+json",
		`{"status":{"conditions":[{"type":"NamespaceContentRemaining","status":"True","reason":"SomeResourcesRemain"}]}}`)
	if w := ts.do("GET", path, "", ""); w.Code != 200 {
		t.Fatalf("GET a Terminating namespace after updates = %d %s, want 200 (spec.finalizers holds it)", w.Code, w.Body)
	}
	ts.must(200, "PUT", path+"/finalize", "", `{"metadata":{"name":"team"},"spec":{"finalizers":[]}}`)
	if w := ts.do("GET", path, "", ""); w.Code != 404 {
		t.Errorf("GET after its finalizers are removed = %d, want 404", w.Code)
	}
}
