package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/admitd/admitd/internal/registry"
)

// The streamed answers to lists (JSON, protobuf, YAML, Tables, metadata)
// are checked against the answer made at once from the listed objects.

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
// says), and how many objects it holds.
func wholeAnswer(t *testing.T, ts *testServer, res *registry.Resource, r *http.Request, query, rv string) (any, int) {
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
	whole, err := ts.s.transformList(r, res, collectionMedia(r, n), items, lm)
	if err != nil {
		t.Fatal(err)
	}
	return whole, len(items)
}
