package apiserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// JSON answers are indented for ?pretty=true and for the user agents of
// browsers and command-line HTTP tools unless ?pretty=false, as
// kube-apiserver's deprecated pretty printing; the content is the same.
func TestPrettyPrinting(t *testing.T) {
	ts := newTestServer(t)
	ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"c"},"data":{"k":"v"}}`)
	get := func(path, userAgent, accept string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.Header.Set("User-Agent", userAgent)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		w := httptest.NewRecorder()
		ts.s.ServeHTTP(w, r)
		return w
	}
	compact := get(cmPath+"/c", "kubectl/v1.37.2", "").Body.Bytes()
	var want bytes.Buffer
	if err := json.Indent(&want, bytes.TrimRight(compact, "\n"), "", "  "); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, userAgent, accept string
		pretty                  bool
	}{
		{cmPath + "/c?pretty=true", "kubectl/v1.37.2", "", true},
		{cmPath + "/c?pretty=1", "Go-http-client/2.0", "", true},
		{cmPath + "/c", "curl/8.5.0", "", true},
		{cmPath + "/c", "Wget/1.21", "", true},
		{cmPath + "/c", "Mozilla/5.0 (X11; Linux x86_64)", "", true},
		{cmPath + "/c?pretty=false", "curl/8.5.0", "", false},
		{cmPath + "/c", "kubectl/v1.37.2", "", false},
		{cmPath + "/c?pretty=true", "curl/8.5.0", "application/yaml", false},
	} {
		w := get(c.path, c.userAgent, c.accept)
		body := w.Body.Bytes()
		switch {
		case w.Code != http.StatusOK:
			t.Errorf("GET %s as %s = %d %q", c.path, c.userAgent, w.Code, body)
		case c.pretty && !bytes.Equal(body, want.Bytes()):
			t.Errorf("GET %s as %s = %q, want it indented: %q", c.path, c.userAgent, body, want.Bytes())
		case !c.pretty && c.accept == "" && !bytes.Equal(body, compact):
			t.Errorf("GET %s as %s = %q, want it compact: %q", c.path, c.userAgent, body, compact)
		case !c.pretty && c.accept != "" && !strings.HasPrefix(string(body), "apiVersion: v1\n"):
			t.Errorf("GET %s as %s accepting %s = %q", c.path, c.userAgent, c.accept, body)
		}
	}
	// errors are indented too
	w := get(cmPath+"/absent", "curl/8.5.0", "")
	if w.Code != http.StatusNotFound || !strings.HasPrefix(w.Body.String(), "{\n  \"kind\": \"Status\",\n") {
		t.Errorf("GET absent as curl = %d %q, want an indented Status", w.Code, w.Body)
	}
}

// /version is always indented (upstream writes it raw, indented, without a
// newline at the end); the OpenAPI documents never are.
func TestIndentedOutsideTheAPI(t *testing.T) {
	ts := newTestServer(t)
	w := ts.do(http.MethodGet, "/version", "", "")
	if body := w.Body.String(); !strings.HasPrefix(body, "{\n  \"major\": \"1\",\n") || strings.HasSuffix(body, "\n") {
		t.Errorf("GET /version = %q, want it indented without a newline at the end", body)
	}
	r := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
	r.Header.Set("User-Agent", "curl/8.5.0")
	rec := httptest.NewRecorder()
	ts.s.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), `{"swagger":"2.0",`) {
		t.Errorf("GET /openapi/v2 as curl = %d %.100q, want it compact", rec.Code, rec.Body)
	}
}
