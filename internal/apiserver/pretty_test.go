package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// A list asked for by curl is the compact list indented, whether it is
// streamed (larger than the indenter's buffer), served from the cached
// whole list, or a page with a limit; over a real connection it has no
// Content-Length of the compact list.
func TestPrettyListAsCurl(t *testing.T) {
	ts := newTestServer(t)
	value := strings.Repeat(`x\"{[,:]}\\`, 20)
	for i := range 150 {
		ts.must(201, "POST", cmPath, mediaJSON, fmt.Sprintf(`{"metadata":{"name":"c%03d","labels":{"i":"%d"}},"data":{"k":"%s","empty":""}}`, i, i, value))
	}
	srv := httptest.NewServer(ts.s)
	defer srv.Close()
	get := func(path, userAgent string) ([]byte, http.Header) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", userAgent)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s as %s = %d %.200q, %v", path, userAgent, resp.StatusCode, body, err)
		}
		return body, resp.Header
	}
	for _, path := range []string{cmPath, cmPath, cmPath + "?limit=40", "/api/v1/configmaps?labelSelector=i"} {
		compact, _ := get(path, "kubectl/v1.37.2")
		if len(compact) <= jsonIndentBuffer && !strings.Contains(path, "limit") {
			t.Fatalf("GET %s is %d bytes, want more than the indenter's buffer (%d)", path, len(compact), jsonIndentBuffer)
		}
		want := indentWhole(t, compact)
		got, h := get(path, "curl/8.5.0")
		if !bytes.Equal(got, want) {
			t.Errorf("GET %s as curl = %d bytes, want the compact list indented (%d bytes)", path, len(got), len(want))
		}
		if cl := h.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(got)) {
			t.Errorf("GET %s as curl: Content-Length %s, body of %d bytes", path, cl, len(got))
		}
	}
}

// headerCounter is a recorder that counts its WriteHeader calls.
type headerCounter struct {
	*httptest.ResponseRecorder
	headers int
}

func (h *headerCounter) WriteHeader(code int) {
	h.headers++
	h.ResponseRecorder.WriteHeader(code)
}

// The indented answer reaches the connection while it is being written,
// never held whole: after each piece, what the connection has is what was
// laid out but for at most the indenter's buffer. Flush writes on what
// is complete.
func TestPrettyWriterStreams(t *testing.T) {
	var src bytes.Buffer
	src.WriteString(`{"kind":"List","items":[`)
	for i := range 3000 {
		if i > 0 {
			src.WriteByte(',')
		}
		fmt.Fprintf(&src, `{"name":"item-%d","data":{"k":"v \"%d\""},"list":[],"map":{}}`, i, i)
	}
	src.WriteString("]}\n")
	want := indentWhole(t, src.Bytes())

	rec := &headerCounter{ResponseRecorder: httptest.NewRecorder()}
	pw := &prettyWriter{w: rec, api: true}
	pw.Header().Set("Content-Type", mediaJSON)
	pw.Header().Set("Content-Length", strconv.Itoa(src.Len()))
	pw.WriteHeader(http.StatusOK)
	if rec.headers != 1 || rec.Header().Get("Content-Length") != "" {
		t.Fatalf("after WriteHeader: %d headers written, Content-Length %q; want 1, none", rec.headers, rec.Header().Get("Content-Length"))
	}
	data := src.Bytes()
	for from := 0; from < len(data); from += 1000 {
		to := min(from+1000, len(data))
		if _, err := pw.Write(data[from:to]); err != nil {
			t.Fatal(err)
		}
		if n := rec.Body.Len(); !bytes.HasPrefix(want, rec.Body.Bytes()) || (to > 2*jsonIndentBuffer && n < to-jsonIndentBuffer) {
			t.Fatalf("after writing %d bytes the connection has %d, want a prefix of the indented answer, at least %d", to, n, to-jsonIndentBuffer)
		}
		if from == 5000 {
			pw.Flush()
			if !rec.Flushed || !bytes.Equal(withoutWhitespace(rec.Body.Bytes()), withoutWhitespace(data[:to])) {
				t.Fatalf("after Flush the connection has %d bytes ending %q (flushed %v), want all written so far (ending %q)",
					rec.Body.Len(), rec.Body.Bytes()[max(0, rec.Body.Len()-40):], rec.Flushed, data[to-40:to])
			}
		}
	}
	pw.finish()
	if got := rec.Body.Bytes(); !bytes.Equal(got, want) || rec.headers != 1 {
		t.Errorf("indented answer of %d bytes (%d headers), want %d bytes (1 header)", len(got), rec.headers, len(want))
	}
}

// Only JSON from the API, or a JSON error, is indented; anything else
// passes through with its own Content-Length. An answer never begun is
// left alone.
func TestPrettyWriterChooses(t *testing.T) {
	const compact = `{"a":[1,{}],"b":"x"}` + "\n"
	indented := "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": \"x\"\n}"
	for _, c := range []struct {
		name        string
		api         bool
		contentType string
		code        int
		want        string
	}{
		{"API JSON", true, "application/json", 200, indented},
		{"API JSON with parameters", true, "application/json;charset=utf-8", 200, indented},
		{"API YAML", true, "application/yaml", 200, compact},
		{"API protobuf", true, "application/vnd.kubernetes.protobuf", 200, compact},
		{"API no Content-Type", true, "", 200, compact},
		{"JSON outside the API", false, "application/json", 200, compact},
		{"JSON error outside the API", false, "application/json", 404, indented},
		{"text error outside the API", false, "text/plain", 500, compact},
	} {
		rec := &headerCounter{ResponseRecorder: httptest.NewRecorder()}
		pw := &prettyWriter{w: rec, api: c.api}
		if c.contentType != "" {
			pw.Header().Set("Content-Type", c.contentType)
		}
		pw.Header().Set("Content-Length", strconv.Itoa(len(compact)))
		pw.WriteHeader(c.code)
		_, _ = pw.Write([]byte(compact[:7]))
		_, _ = pw.Write([]byte(compact[7:]))
		pw.finish()
		wantLength := strconv.Itoa(len(compact))
		if c.want == indented {
			wantLength = ""
		}
		if got := rec.Body.String(); got != c.want || rec.Code != c.code || rec.headers != 1 || rec.Header().Get("Content-Length") != wantLength {
			t.Errorf("%s: %d %q (%d headers, Content-Length %q), want %d %q (1 header, Content-Length %q)",
				c.name, rec.Code, got, rec.headers, rec.Header().Get("Content-Length"), c.code, c.want, wantLength)
		}
	}
	rec := &headerCounter{ResponseRecorder: httptest.NewRecorder()}
	pw := &prettyWriter{w: rec, api: true}
	pw.Header().Set("Content-Type", mediaJSON)
	pw.finish()
	if rec.headers != 0 || rec.Body.Len() != 0 || rec.Flushed {
		t.Errorf("an answer never begun: %d headers, %q written, flushed %v; want nothing", rec.headers, rec.Body, rec.Flushed)
	}
}
