package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

// The streamed answers to lists (JSON, protobuf, YAML, Tables, metadata)
// are checked against the answer made at once from the listed objects.

// listQueries are the lists the differentials ask for: whole, limited,
// selected by label, both, and selecting nothing.
var listQueries = []string{"", "limit=5", "labelSelector=p%3Deven", "limit=3&labelSelector=p%3Dodd", "limit=2000", "fieldSelector=metadata.name%3Dnone"}

// configMaps is the catalogue's ConfigMap resource.
func configMaps(t *testing.T, ts *testServer) *registry.Resource {
	t.Helper()
	res, ok := ts.s.cat.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	if !ok {
		t.Fatal("no configmaps")
	}
	return res
}

// listAs lists the config maps of default with query, taking accept, and
// fails unless the answer is a 200 in media.
func listAs(t *testing.T, ts *testServer, accept, query, media string) (*http.Request, *httptest.ResponseRecorder) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, cmPath+"?"+query, nil)
	r.Header.Set("Accept", accept)
	w := httptest.NewRecorder()
	ts.s.ServeHTTP(w, r)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != media {
		t.Fatalf("%s ?%s = %d %s: %.300s", accept, query, w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	return r, w
}

// wholeAnswer is the answer to r, a list with query, made at once from
// the objects read at resourceVersion rv (or where its continue token
// says), the form negotiated for it, and how many objects it holds.
func wholeAnswer(t *testing.T, ts *testServer, res *registry.Resource, r *http.Request, query, rv string) (any, negotiated, int) {
	t.Helper()
	q, _ := url.ParseQuery(query)
	if q.Get("continue") == "" {
		q.Set("resourceVersion", rv)
		q.Set("resourceVersionMatch", "Exact")
	}
	lq, err := parseListQuery(res, q)
	if err != nil {
		t.Fatal(err)
	}
	items, lm, err := ts.s.listObjects(context.Background(), res, "default", lq)
	if err != nil {
		t.Fatal(err)
	}
	n, err := negotiateOutput(r, res)
	if err != nil {
		t.Fatal(err)
	}
	n = collectionMedia(r, n)
	whole, err := ts.s.transformList(r, res, n, items, lm)
	if err != nil {
		t.Fatal(err)
	}
	return whole, n, len(items)
}
