package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// The health endpoints answer as upstream's: "ok", the checks with
// ?verbose, ?exclude, one check by path, and a 500 listing the checks
// (reasons withheld) when one fails — readyz's shutdown check once
// shutdown has begun.
func TestHealthEndpoints(t *testing.T) {
	ready := true
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.Ready = func() bool { return ready }
	s := New(cfg)
	get := func(path string) (int, string) {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w.Code, w.Body.String()
	}
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/healthz", 200, "ok"},
		{"/livez?verbose", 200, "[+]ping ok\n[+]log ok\nlivez check passed\n"},
		{"/readyz?verbose", 200, "[+]ping ok\n[+]log ok\n[+]informer-sync ok\n[+]shutdown ok\nreadyz check passed\n"},
		{"/readyz?verbose&exclude=log&exclude=nope", 200,
			"[+]ping ok\n[+]log excluded: ok\n[+]informer-sync ok\n[+]shutdown ok\nwarn: some health checks cannot be excluded: no matches for \"nope\"\nreadyz check passed\n"},
		{"/readyz/shutdown", 200, "ok"},
		{"/healthz/shutdown", 404, ""},
	} {
		if code, body := get(tc.path); code != tc.code || (tc.body != "" && body != tc.body) {
			t.Errorf("GET %s = %d %q, want %d %q", tc.path, code, body, tc.code, tc.body)
		}
	}
	ready = false
	if code, body := get("/readyz"); code != 500 || body != "[+]ping ok\n[+]log ok\n[-]informer-sync failed: reason withheld\n[+]shutdown ok\nreadyz check failed\n" {
		t.Errorf("GET /readyz not synced = %d %q", code, body)
	}
	ready = true
	s.BeginShutdown()
	if code, body := get("/readyz/shutdown"); code != 500 || body != "internal server error: process is shutting down\n" {
		t.Errorf("GET /readyz/shutdown shutting down = %d %q", code, body)
	}
	if code, _ := get("/livez"); code != 200 {
		t.Errorf("GET /livez shutting down = %d, want 200", code)
	}
}
