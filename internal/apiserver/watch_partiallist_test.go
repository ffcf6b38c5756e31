package apiserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A watch asked to send PartialObjectMetadataList ends at its first event
// having sent nothing, as kube-apiserver 1.37.2's does (it cannot turn
// an object into a list), instead of running to its timeout.
func TestWatchAsPartialListEndsAtTheFirstEvent(t *testing.T) {
	ts := newTestServer(t)
	ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"a"}}`)
	srv := httptest.NewServer(ts.s)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+cmPath+"?watch=true&resourceVersion=0&timeoutSeconds=15", nil)
	req.Header.Set("Accept", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || len(body) != 0 {
		t.Errorf("watch answered %d %q, %v; want 200 and an empty stream", resp.StatusCode, body, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the watch ran %v, to its timeout", took)
	}
}
