package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/bolt"
)

// TestStreamedListIsTheWholeList: a JSON list answered by serveJSONList is
// byte for byte the list encoded at once (listObjects, transformList and
// the JSON encoder), with and without limits, selectors and continue
// tokens, across several storage pages.
func TestStreamedListIsTheWholeList(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testStreamedList(t, newTestServer(t)) })
	t.Run("bolt", func(t *testing.T) {
		store, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		s := New(testConfig(store, registry.NewCatalogue()))
		if err := s.Bootstrap(context.Background()); err != nil {
			t.Fatal(err)
		}
		testStreamedList(t, &testServer{t: t, s: s})
	})
}

// testStreamedList runs the lists of TestStreamedListIsTheWholeList on ts
// (bolt reads a cached item's key without its value).
func testStreamedList(t *testing.T, ts *testServer) {
	for i := 0; i < 2*listStreamPage+7; i++ {
		label := "odd"
		if i%2 == 0 {
			label = "even"
		}
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%04d","labels":{"p":%q}},"data":{"k":"<v&%d>"}}`, i, label, i)
		ts.must(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", body)
	}
	res, ok := ts.s.cat.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	if !ok {
		t.Fatal("no configmaps")
	}
	for _, query := range []string{"", "limit=5", "labelSelector=p%3Deven", "limit=3&labelSelector=p%3Dodd", "limit=2000", "fieldSelector=metadata.name%3Dcm-0003"} {
		got := ts.do(http.MethodGet, "/api/v1/namespaces/default/configmaps?"+query, "", "")
		if got.Code != http.StatusOK {
			t.Fatalf("?%s = %d %s", query, got.Code, got.Body)
		}
		if query == "" {
			// flow control's seat estimate learns the resource's size from
			// a list of several pages, whatever the item cache held
			if count, avg, ok := ts.s.objectStats.get("", "configmaps"); !ok || count != 2*listStreamPage+7 || avg < 100 {
				t.Errorf("object stats after a list: count %d, average %d bytes, known %v; want %d, > 100", count, avg, ok, 2*listStreamPage+7)
			}
		}
		meta := checkWholeList(t, ts, res, query, got.Body.Bytes())
		if meta.Metadata.Continue != "" {
			next := ts.do(http.MethodGet, "/api/v1/namespaces/default/configmaps?"+query+"&continue="+url.QueryEscape(meta.Metadata.Continue), "", "")
			if next.Code != http.StatusOK || !bytes.Contains(next.Body.Bytes(), []byte(`"items":[{`)) {
				t.Errorf("?%s continued: %d %.200s", query, next.Code, next.Body)
			}
		}
	}
	// an item encoded once is not served after its object changes
	ts.must(http.StatusOK, http.MethodPatch, "/api/v1/namespaces/default/configmaps/cm-0003", "application/merge-patch+json", `{"data":{"k":"changed"}}`)
	ts.must(http.StatusOK, http.MethodDelete, "/api/v1/namespaces/default/configmaps/cm-0004", "", "")
	ts.must(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-0003a"},"data":{"k":"new"}}`)
	// the earlier whole lists left their keys and items (runs) that this
	// one walks beside storage's keys: the changed, deleted and new keys
	// must not be taken from them
	after := ts.do(http.MethodGet, "/api/v1/namespaces/default/configmaps", "", "")
	body := after.Body.String()
	if !strings.Contains(body, `"k":"changed"`) || strings.Contains(body, `"name":"cm-0004"`) || !strings.Contains(body, `"name":"cm-0003a"`) {
		t.Errorf("a list after a patch, a delete and a create still has the old items")
	}
	checkWholeList(t, ts, res, "", after.Body.Bytes())
	checkWholeList(t, ts, res, "", ts.do(http.MethodGet, "/api/v1/namespaces/default/configmaps", "", "").Body.Bytes())
}

type listMeta struct {
	Metadata struct {
		ResourceVersion, Continue string
	}
}

// checkWholeList checks that got, the answer to a list with query, is byte
// for byte the list encoded at once at its resourceVersion.
func checkWholeList(t *testing.T, ts *testServer, res *registry.Resource, query string, got []byte) listMeta {
	t.Helper()
	var meta listMeta
	if err := json.Unmarshal(got, &meta); err != nil {
		t.Fatalf("?%s: %v", query, err)
	}
	whole, _, _ := wholeAnswer(t, ts, res, httptest.NewRequest(http.MethodGet, cmPath+"?"+query, nil), query, meta.Metadata.ResourceVersion)
	var want bytes.Buffer
	if err := json.NewEncoder(&want).Encode(whole); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("?%s: streamed list differs from the whole list (%d vs %d bytes)\n got %.300s\nwant %.300s", query, len(got), want.Len(), got, want.String())
	}
	return meta
}

// TestItemRunFind: a list's walk of the previous whole list's keys finds an
// item only for the same key at the same revision, keys coming in order.
func TestItemRunFind(t *testing.T) {
	run := itemRun{{key: "/a", it: &cachedItem{rev: 1}}, {key: "/c", it: &cachedItem{rev: 3}}, {key: "/d", it: &cachedItem{rev: 4}}}
	at := 0
	for _, c := range []struct {
		key     string
		rev     int64
		found   bool
		atAfter int
	}{
		{"/a", 1, true, 0},
		{"/b", 2, false, 1}, // new key between two of the run
		{"/c", 5, false, 1}, // changed since
		{"/e", 6, false, 3}, // past the run's end
	} {
		got := run.find(&at, c.key, c.rev)
		if (got != nil) != c.found || at != c.atAfter || got != nil && (got.key != c.key || got.it.rev != c.rev) {
			t.Errorf("find(%s at %d) = %+v, at %d; want found %v, at %d", c.key, c.rev, got, at, c.found, c.atAfter)
		}
	}
}
