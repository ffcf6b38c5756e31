package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Table of one object, got or watched, carries the object's
// resourceVersion, as kube-apiserver's table convertors set it (recorded).
func TestTableOfOneObjectHasItsResourceVersion(t *testing.T) {
	ts := newTestServer(t)
	created := ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"c"}}`)
	const asTable = "application/json;as=Table;g=meta.k8s.io;v=v1"
	r := httptest.NewRequest(http.MethodGet, cmPath+"/c", nil)
	r.Header.Set("Accept", asTable)
	w := httptest.NewRecorder()
	ts.s.ServeHTTP(w, r)
	var table metav1.Table
	if err := json.Unmarshal(w.Body.Bytes(), &table); err != nil || table.ResourceVersion != created.ResourceVersion {
		t.Errorf("GET as Table = %q (%v), want resourceVersion %s", w.Body, err, created.ResourceVersion)
	}
	srv := httptest.NewServer(ts.s)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+cmPath+"?watch=true&timeoutSeconds=1", nil)
	req.Header.Set("Accept", asTable)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ev metav1.WatchEvent
	if err := json.NewDecoder(resp.Body).Decode(&ev); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ev.Object.Raw, &table); err != nil || table.ResourceVersion != created.ResourceVersion {
		t.Errorf("watch as Table = %s (%v), want resourceVersion %s", ev.Object.Raw, err, created.ResourceVersion)
	}
}
