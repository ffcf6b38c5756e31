package apiserver

import (
	"testing"
)

// A DeleteOptions body decodes as upstream's serializer decodes it: keys
// match fields case-sensitively, so {"DryRun":["All"]} is not a dry run.
func TestDeleteOptionsKeysAreCaseSensitive(t *testing.T) {
	ts := newTestServer(t)
	const path = "/api/v1/namespaces/default/configmaps"
	ts.must(201, "POST", path, "", `{"metadata":{"name":"a"}}`)
	ts.must(201, "POST", path, "", `{"metadata":{"name":"b"}}`)
	ts.must(200, "DELETE", path+"/a", "", `{"DryRun":["All"]}`)
	if w := ts.do("GET", path+"/a", "", ""); w.Code != 404 {
		t.Errorf("GET after a delete with {\"DryRun\":[\"All\"]} = %d, want 404 (the key is not dryRun)", w.Code)
	}
	ts.must(200, "DELETE", path+"/b", "", `{"dryRun":["All"]}`)
	if w := ts.do("GET", path+"/b", "", ""); w.Code != 200 {
		t.Errorf("GET after a dry-run delete = %d, want 200", w.Code)
	}
}

// A dry-run create of a name that is taken is a conflict, as upstream's
// dry-run storage answers.
func TestDryRunCreateOfATakenNameConflicts(t *testing.T) {
	ts := newTestServer(t)
	const path = "/api/v1/namespaces/default/configmaps"
	ts.must(201, "POST", path+"?dryRun=All", "", `{"metadata":{"name":"a"}}`)
	ts.must(201, "POST", path, "", `{"metadata":{"name":"a"}}`)
	if w := ts.do("POST", path+"?dryRun=All", "", `{"metadata":{"name":"a"}}`); w.Code != 409 {
		t.Errorf("dry-run create of a taken name = %d %s, want 409", w.Code, w.Body)
	}
}

// A create that conflicts with an object waiting for its finalizers says
// so, as upstream's store does, for a dry run too.
func TestCreateOverATerminatingObject(t *testing.T) {
	ts := newTestServer(t)
	const path = "/api/v1/namespaces/default/configmaps"
	ts.must(201, "POST", path, "", `{"metadata":{"name":"x","finalizers":["example.com/hold"]}}`)
	if w := ts.do("DELETE", path+"/x", "", ""); w.Code != 200 && w.Code != 202 {
		t.Fatalf("delete = %d %s", w.Code, w.Body)
	}
	for _, query := range []string{"", "?dryRun=All"} {
		w := ts.do("POST", path+query, "", `{"metadata":{"name":"x"}}`)
		if _, msg := statusMessage(t, w.Body.Bytes()); w.Code != 409 || msg != `object is being deleted: configmaps "x" already exists` {
			t.Errorf("POST%s over a terminating object = %d %q", query, w.Code, msg)
		}
	}
}
