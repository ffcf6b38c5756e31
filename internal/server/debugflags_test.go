package server

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// /debug/flags/v answers as kube-apiserver's: a PUT of a number sets the
// verbosity (klog's, and admitd's own level), anything else is refused
// with its plain-text answers.
func TestDebugFlagsVerbosity(t *testing.T) {
	level := new(slog.LevelVar)
	routes := debugFlagRoutes(level)
	do := func(method, path, body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		routes[path].ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(body)))
		return w
	}
	defer do(http.MethodPut, "/debug/flags/v", "0")
	for _, c := range []struct {
		method, body string
		code         int
		answer       string
	}{
		{http.MethodPut, "5", 200, "successfully set klog.logging.verbosity to 5\n"},
		{http.MethodGet, "", 406, "unsupported http method\n"},
		{http.MethodPost, "3", 406, "unsupported http method\n"},
		{http.MethodPut, "abc", 400, "strconv.ParseUint: parsing \"abc\": invalid syntax\n"},
		{http.MethodPut, "-1", 400, "strconv.ParseUint: parsing \"-1\": invalid syntax\n"},
		{http.MethodPut, strings.Repeat("1", 5000), 400, "strconv.ParseUint: parsing \"" + strings.Repeat("1", 1024) + "\": value out of range\n"},
	} {
		w := do(c.method, "/debug/flags/v", c.body)
		if w.Code != c.code || w.Body.String() != c.answer || w.Header().Get("Content-Type") != "text/plain" {
			t.Errorf("%s /debug/flags/v %.20q = %d %s %q, want %d %q", c.method, c.body, w.Code, w.Header().Get("Content-Type"), w.Body, c.code, c.answer)
		}
	}
	if !klog.V(5).Enabled() || level.Level() != slog.LevelDebug {
		t.Errorf("after v=5: klog V(5) %v, level %v; want enabled, debug", klog.V(5).Enabled(), level.Level())
	}
	do(http.MethodPut, "/debug/flags/v", "2")
	if klog.V(3).Enabled() || !klog.V(2).Enabled() || level.Level() != slog.LevelInfo {
		t.Errorf("after v=2: klog V(3) %v, V(2) %v, level %v; want off, on, info", klog.V(3).Enabled(), klog.V(2).Enabled(), level.Level())
	}
	if w := do(http.MethodGet, "/debug/flags", ""); w.Code != 200 || !strings.Contains(w.Body.String(), "<tr>v<br>") {
		t.Errorf("GET /debug/flags = %d %q, want the index naming v", w.Code, w.Body)
	}
}
