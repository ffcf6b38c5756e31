package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// pinCheckingStore records, for each later page of a list, whether the
// server held its revision pinned while reading it.
type pinCheckingStore struct {
	storage.Store
	s                    *Server
	laterPages, unpinned int
}

func (p *pinCheckingStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if opts.StartKey != "" && opts.Revision > 0 {
		p.laterPages++
		if oldest := p.s.OldestReadRevision(); oldest == 0 || oldest > opts.Revision {
			p.unpinned++
		}
	}
	return p.Store.List(ctx, prefix, opts)
}

// TestListPinsItsRevision: a list read in several storage pages holds its
// revision (OldestReadRevision, what compaction keeps) until its last page
// is read, and lets it go after.
func TestListPinsItsRevision(t *testing.T) {
	store := &pinCheckingStore{Store: memory.New()}
	s := New(testConfig(store, registry.NewCatalogue()))
	store.s = s
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s}
	for i := 0; i < listStreamPage+3; i++ {
		ts.must(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json",
			fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%04d"}}`, i))
	}
	// a JSON list, a Table and a filtered list all read two pages
	for _, accept := range []string{"application/json", "application/json;as=Table;v=v1;g=meta.k8s.io", "application/json"} {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps", nil)
		if accept == "application/json" && store.laterPages > 0 {
			r.URL.RawQuery = "labelSelector=x!%3Dy"
		}
		r.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("list: %d %s", w.Code, w.Body)
		}
	}
	if store.laterPages == 0 || store.unpinned != 0 {
		t.Errorf("%d later pages read, %d of them unpinned", store.laterPages, store.unpinned)
	}
	if got := s.OldestReadRevision(); got != 0 {
		t.Errorf("after the lists, revision %d still pinned", got)
	}
}

// TestContinueAfterCompaction: a continue token whose revision was
// compacted is upstream's 410 with a token going on from the same key at
// the latest revision, which lists the rest as it is now.
func TestContinueAfterCompaction(t *testing.T) {
	store := memory.New()
	s := New(testConfig(store, registry.NewCatalogue()))
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s}
	for _, name := range []string{"a", "b", "c", "d"} {
		ts.must(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+`"}}`)
	}
	const path = "/api/v1/namespaces/default/configmaps"
	var first metav1.List
	if err := json.Unmarshal(ts.do(http.MethodGet, path+"?limit=2", "", "").Body.Bytes(), &first); err != nil || first.Continue == "" {
		t.Fatalf("first page: %v, continue %q", err, first.Continue)
	}
	ts.must(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e"}}`)
	rev, _ := store.Revision(context.Background())
	if err := store.Compact(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
	got := ts.do(http.MethodGet, path+"?limit=2&continue="+url.QueryEscape(first.Continue), "", "")
	var st metav1.Status
	if err := json.Unmarshal(got.Body.Bytes(), &st); err != nil || got.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired || st.Continue == "" {
		t.Fatalf("continue after compaction: %d %s", got.Code, got.Body)
	}
	var rest metav1.List
	if err := json.Unmarshal(ts.do(http.MethodGet, path+"?continue="+url.QueryEscape(st.Continue), "", "").Body.Bytes(), &rest); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range rest.Items {
		var m metav1.PartialObjectMetadata
		_ = json.Unmarshal(it.Raw, &m)
		names = append(names, m.Name)
	}
	if fmt.Sprint(names) != "[c d e]" {
		t.Errorf("continued at the latest revision: %v, want [c d e]", names)
	}
}
