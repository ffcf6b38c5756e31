package apiserver

import (
	"context"
	"net/http"
	"testing"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// A list at a compacted revision is upstream storage's 410, in its words.
func TestListAtCompactedRevision(t *testing.T) {
	store := memory.New()
	s := New(testConfig(store, registry.NewCatalogue()))
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s}
	const path = "/api/v1/namespaces/default/configmaps"
	ts.must(http.StatusCreated, http.MethodPost, path, "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)
	rev, _ := store.Revision(context.Background())
	if err := store.Compact(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
	checkAnswer(t, "exact rv 1", ts.do(http.MethodGet, path+"?resourceVersion=1&resourceVersionMatch=Exact", "", ""), 200, 410,
		"The resourceVersion for the provided list is too old.", "")
}
