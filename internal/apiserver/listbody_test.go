package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// TestWholeListAnswerKept: a whole list asked again while the store's
// revision has not moved is the same answer and reads no storage; after a
// write anywhere it is read again (and is the new state); a filtered or
// limited list is never the kept answer.
func TestWholeListAnswerKept(t *testing.T) {
	store := &countingStore{Store: memory.New()}
	s := New(testConfig(store, registry.NewCatalogue()))
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s}
	for _, name := range []string{"a", "b", "c"} {
		ts.must(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+`","labels":{"l":"`+name+`"}}}`)
	}
	const path = "/api/v1/namespaces/default/configmaps"
	list := func(query string) ([]byte, int64) {
		t.Helper()
		before := store.calls.Load()
		got := ts.do(http.MethodGet, path+query, "", "")
		if got.Code != http.StatusOK {
			t.Fatalf("list %s: %d %s", query, got.Code, got.Body)
		}
		return got.Body.Bytes(), store.calls.Load() - before
	}
	first, reads := list("")
	if reads == 0 {
		t.Fatal("the first list read no storage")
	}
	for _, query := range []string{"", "?resourceVersion=0"} {
		again, reads := list(query)
		if reads != 0 || !bytes.Equal(again, first) {
			t.Errorf("list%s without a write: %d storage reads, same answer %v", query, reads, bytes.Equal(again, first))
		}
	}
	for _, query := range []string{"?labelSelector=l%3Da", "?limit=2", "?resourceVersion=1&resourceVersionMatch=NotOlderThan"} {
		if _, reads := list(query); reads == 0 {
			t.Errorf("list%s was answered from the kept whole list", query)
		}
	}
	// a write in another namespace moves the revision on
	ts.must(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/kube-system/configmaps", "application/json",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"elsewhere"}}`)
	after, reads := list("")
	if reads == 0 || bytes.Equal(after, first) {
		t.Errorf("after a write: %d storage reads, same answer %v", reads, bytes.Equal(after, first))
	}
	ts.must(http.StatusOK, http.MethodDelete, path+"/b", "", "")
	if gone, _ := list(""); bytes.Contains(gone, []byte(`"name":"b"`)) {
		t.Error("a deleted object is still listed")
	}
}

// TestOneCaptureAtATime: while one list of a prefix captures its answer,
// another list of it does not (it is answered from storage all the same).
func TestOneCaptureAtATime(t *testing.T) {
	var c itemCache
	res := &registry.Resource{}
	first, gen := c.startCapture(res, "/p")
	if first == nil {
		t.Fatal("the first list may not capture")
	}
	if second, _ := c.startCapture(res, "/p"); second != nil {
		t.Error("a second list captures at the same time")
	}
	if other, g := c.startCapture(res, "/q"); other == nil {
		t.Error("another prefix's list may not capture")
	} else {
		c.endCapture(res, "/q", g, other, "7", false)
	}
	_, _ = first.Write([]byte(`{"items":[]}`))
	c.endCapture(res, "/p", gen, first, "7", true)
	if b := c.bodies[itemKey{res, "/p"}]; b == nil || b.rev != 7 || string(b.body) != `{"items":[]}` {
		t.Errorf("kept %+v", b)
	}
	if c.bodies[itemKey{res, "/q"}] != nil {
		t.Error("an incomplete answer was kept")
	}
	if again, _ := c.startCapture(res, "/p"); again == nil {
		t.Error("after the first ended, a list may not capture")
	}
}

// TestListAsTableAndMetadataByPages: a list as a Table or as
// PartialObjectMetadataList, made a storage page at a time, is byte for
// byte what the whole list transformed at once is; a list asked for in
// protobuf is the JSON list (as before, now streamed).
func TestListAsTableAndMetadataByPages(t *testing.T) {
	ts := newTestServer(t)
	for i := 0; i < listStreamPage+20; i++ {
		ts.must(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json",
			fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%04d"},"data":{"k":"v%d"}}`, i, i))
	}
	res, _ := ts.s.cat.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	now := time.Now().Add(time.Hour)
	ts.s.cfg.Now = func() time.Time { return now } // the Age column the same on both sides
	for _, accept := range []string{
		"application/json;as=Table;v=v1;g=meta.k8s.io",
		"application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
		"application/vnd.kubernetes.protobuf, application/json",
	} {
		for _, query := range []string{"", "limit=7", "includeObject=Object"} {
			r, w := listAs(t, ts, accept, query, mediaJSON)
			var meta listMeta
			if err := json.Unmarshal(w.Body.Bytes(), &meta); err != nil {
				t.Fatal(err)
			}
			whole, n, _ := wholeAnswer(t, ts, res, r, query, meta.Metadata.ResourceVersion)
			want := httptest.NewRecorder()
			writeNegotiated(want, r, http.StatusOK, n, whole)
			if !bytes.Equal(w.Body.Bytes(), want.Body.Bytes()) || w.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
				t.Errorf("%s ?%s: differs from the whole list transformed (%s vs %s)\n%s", accept, query,
					w.Header().Get("Content-Type"), want.Header().Get("Content-Type"), firstDifference(w.Body.String(), want.Body.String()))
			}
		}
	}
}
