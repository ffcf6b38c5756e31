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
		path string
		page bool
	}{
		{"/foo", true},
		{"/foo/bar", true},
		{"/apis/unknown.io", true},
		{"/apis/unknown.io/v1", true},
		{"/apis/unknown.io/v1/things", true},
		{"/apis/unknown.io/v1/namespaces/default/things", true},
		{"/apis/unknown.io/v1/things?watch=1", true},
		{"/apis/apps/v9", false},
		{"/apis/apps/v9/deployments", false},
		{"/api/v9", false},
		{"/api/v9/pods", false},
		{"/apis/apps/v1/nopes", false},
		{"/api/v1/nopes", false},
	} {
		w := ts.do(http.MethodGet, c.path, "", "")
		ct := w.Header().Get("Content-Type")
		switch {
		case w.Code != http.StatusNotFound:
			t.Errorf("GET %s = %d, want 404", c.path, w.Code)
		case c.page && (!strings.HasPrefix(ct, "text/plain") || w.Body.String() != "404 page not found\n"):
			t.Errorf("GET %s = %s %q, want the plain-text 404 page", c.path, ct, w.Body.String())
		case !c.page && (ct != "application/json" || !strings.Contains(w.Body.String(), `"the server could not find the requested resource"`)):
			t.Errorf("GET %s = %s %q, want a 404 Status", c.path, ct, w.Body.String())
		}
	}
}
