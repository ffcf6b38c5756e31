package apiserver

import (
	"net/http"
	"strings"
	"testing"
)

// A path no served group holds gets kube-apiserver's plain-text 404 page;
// one under a served group (or the legacy /api) a 404 Status. Recorded
// from kube-apiserver 1.37.2 (no metrics server, no APIServices besides the
// built-in ones).
func TestNotFoundPageOrStatus(t *testing.T) {
	ts := newTestServer(t)
	for _, c := range []struct {
		path  string
		page  bool
		empty bool // as the OpenAPI v3 handler: no body at all
	}{
		{path: "/foo", page: true},
		{path: "/foo/bar", page: true},
		{path: "/apis/unknown.io", page: true},
		{path: "/apis/unknown.io/v1", page: true},
		{path: "/apis/unknown.io/v1/things", page: true},
		{path: "/apis/unknown.io/v1/namespaces/default/things", page: true},
		{path: "/apis/unknown.io/v1/things?watch=1", page: true},
		{path: "/apis/apps/v9", page: false},
		{path: "/apis/apps/v9/deployments", page: false},
		{path: "/api/v9", page: false},
		{path: "/api/v9/pods", page: false},
		{path: "/apis/apps/v1/nopes", page: false},
		{path: "/api/v1/nopes", page: false},
		{path: "/openapi/v2/", page: true},
		{path: "/openapi/v2/x", page: true},
		{path: "/openapi/v3/", empty: true},
		{path: "/openapi/v3/bogus", empty: true},
		{path: "/openapi/v3/apis/bogus/v1", empty: true},
		{path: "/openapi/v3/apis/apps/v1/", empty: true},
		{path: "/openapi/v3/apis/apps/v1/extra", empty: true},
		{path: "/openapi/v3//api/v1", empty: true},
	} {
		w := ts.do(http.MethodGet, c.path, "", "")
		ct := w.Header().Get("Content-Type")
		switch {
		case w.Code != http.StatusNotFound:
			t.Errorf("GET %s = %d, want 404", c.path, w.Code)
		case c.empty && (ct != "" || w.Body.Len() != 0):
			t.Errorf("GET %s = %q %q, want a 404 without a body", c.path, ct, w.Body.String())
		case c.empty:
		case c.page && (!strings.HasPrefix(ct, "text/plain") || w.Body.String() != "404 page not found\n"):
			t.Errorf("GET %s = %s %q, want the plain-text 404 page", c.path, ct, w.Body.String())
		case !c.page && (ct != "application/json" || !strings.Contains(w.Body.String(), `"the server could not find the requested resource"`)):
			t.Errorf("GET %s = %s %q, want a 404 Status", c.path, ct, w.Body.String())
		}
	}
}
