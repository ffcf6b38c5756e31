package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

func newFreshnessServer(t *testing.T, wait time.Duration) (*testServer, int64) {
	t.Helper()
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.RevisionWait = wait
	s := New(cfg)
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s}
	ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"first"}}`)
	rev, err := s.store.Revision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ts, rev
}

// A get or list at a resourceVersion the store has not reached waits for
// it, as kube-apiserver's watch cache does, and then serves the state
// that has it.
func TestReadAtAFutureRevisionWaitsForIt(t *testing.T) {
	ts, rev := newFreshnessServer(t, time.Minute)
	rev0 := rev // the revision of the object "first"
	for _, query := range []string{"?resourceVersion=", "/first?resourceVersion=", "?resourceVersionMatch=NotOlderThan&resourceVersion="} {
		next := strconv.FormatInt(rev+1, 10)
		path := cmPath + query + next
		done := make(chan string, 1)
		go func() {
			w := ts.do("GET", path, "", "")
			var m struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			_ = json.Unmarshal(w.Body.Bytes(), &m)
			done <- fmt.Sprintf("%d %s", w.Code, m.Metadata.ResourceVersion)
		}()
		select {
		case got := <-done:
			t.Fatalf("GET %s answered before the store reached %s: %s", path, next, got)
		case <-time.After(100 * time.Millisecond):
		}
		ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"generateName":"later-"}}`)
		select {
		case got := <-done:
			if got != "200 "+next && !(query == "/first?resourceVersion=" && got == fmt.Sprintf("200 %d", rev0)) {
				t.Errorf("GET %s = %s, want 200 at revision %s (the object's own for a get)", path, got, next)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("GET %s still waiting after the store reached %s", path, next)
		}
		rev++
	}
}

// A get or list at a resourceVersion the store does not reach in time is
// kube-apiserver's 504: "Too large resource version: R, current: C", a
// ResourceVersionTooLarge cause, retry after 1 s. A continue token's
// revision counts as the list's.
func TestReadAtATooLargeRevision(t *testing.T) {
	ts, rev := newFreshnessServer(t, 50*time.Millisecond)
	far := rev + 1000
	farRV := strconv.FormatInt(far, 10)
	token := encodeContinue("/registry/core/configmaps/default/first\x00", "/registry/core/configmaps/default/", far)
	for _, path := range []string{
		cmPath + "?resourceVersion=" + farRV,
		cmPath + "?resourceVersionMatch=NotOlderThan&resourceVersion=" + farRV,
		cmPath + "?resourceVersionMatch=Exact&resourceVersion=" + farRV,
		cmPath + "?limit=1&resourceVersion=" + farRV,
		cmPath + "?limit=1&continue=" + url.QueryEscape(token),
		cmPath + "/first?resourceVersion=" + farRV,
	} {
		start := time.Now()
		w := ts.do("GET", path, "", "")
		var st metav1.Status
		_ = json.Unmarshal(w.Body.Bytes(), &st)
		want := fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", far, rev)
		if w.Code != http.StatusGatewayTimeout || st.Message != want || st.Reason != metav1.StatusReasonTimeout || st.Details == nil ||
			st.Details.RetryAfterSeconds != 1 || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge ||
			st.Details.Causes[0].Message != "Too large resource version" {
			t.Errorf("GET %s = %d %s, want 504 %q with a ResourceVersionTooLarge cause, retry after 1 s", path, w.Code, w.Body, want)
		}
		if waited := time.Since(start); waited < 50*time.Millisecond {
			t.Errorf("GET %s answered after %v, before RevisionWait", path, waited)
		}
	}
}
