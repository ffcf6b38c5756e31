package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A resource path no route has is the generic 404, a method its routes
// lack the generic 405 (neither names the resource), as kube-apiserver's
// route table answers; only a list's ?watch=true on a resource that cannot
// watch is the 405 that names the verb and the resource.
func TestRouteErrors(t *testing.T) {
	ts := newTestServer(t)
	const (
		notFound     = "the server could not find the requested resource"
		notAllowed   = "the server does not allow this method on the requested resource"
		watchRefused = `watch is not supported on resources of kind "componentstatuses"`
	)
	for _, c := range []struct {
		method, path string
		code         int
		message      string
	}{
		// a method the path's routes lack
		{http.MethodGet, "/api/v1/namespaces/default/pods/p/binding", 405, notAllowed},
		{http.MethodGet, "/api/v1/namespaces/default/pods/p/eviction", 405, notAllowed},
		{http.MethodPost, "/api/v1/namespaces/default/pods/p/status", 405, notAllowed},
		{http.MethodDelete, "/api/v1/nodes/n/status", 405, notAllowed},
		{http.MethodPut, "/api/v1/namespaces/default/pods/p/exec", 405, notAllowed},
		{http.MethodPost, "/api/v1/namespaces/default/configmaps/c", 405, notAllowed},
		{http.MethodPut, "/api/v1/namespaces/default/configmaps", 405, notAllowed},
		{http.MethodHead, "/api/v1/namespaces/default/configmaps", 405, ""},
		{http.MethodHead, "/api/v1/namespaces/default/configmaps/c", 405, ""},
		{http.MethodOptions, "/api/v1/namespaces/default/configmaps", 405, notAllowed},
		{http.MethodPost, "/api/v1/configmaps", 405, notAllowed},
		{http.MethodDelete, "/api/v1/configmaps", 405, notAllowed},
		{http.MethodGet, "/apis/authentication.k8s.io/v1/tokenreviews", 405, notAllowed},
		{http.MethodPost, "/api/v1/componentstatuses", 405, notAllowed},
		{http.MethodPost, "/api/v1/watch/namespaces/default/configmaps", 405, notAllowed},
		{http.MethodGet, "/api/v1/componentstatuses?watch=true", 405, watchRefused},
		// a path no route has
		{http.MethodGet, "/api/v1/configmaps/c", 404, notFound},
		{http.MethodGet, "/apis/apps/v1/deployments/d", 404, notFound},
		{http.MethodGet, "/api/v1/pods/p/status", 404, notFound},
		{http.MethodGet, "/api/v1/nodes/n/status/y", 404, notFound},
		{http.MethodGet, "/api/v1/namespaces/default/status/y", 404, notFound},
		{http.MethodGet, "/api/v1/namespaces/default/pods/p/status/y", 404, notFound},
		{http.MethodGet, "/api/v1/namespaces/default/pods/p/exec/y", 404, notFound},
		{http.MethodGet, "/apis/apps/v1/namespaces/default/deployments/d/scale/y", 404, notFound},
		{http.MethodGet, "/apis/authentication.k8s.io/v1/tokenreviews/x", 404, notFound},
		{http.MethodGet, "/api/v1/watch/componentstatuses", 404, notFound},
		{http.MethodGet, "/api/v1/watch/namespaces/default/pods/p/status", 404, notFound},
		// served: the object is what is missing
		{http.MethodGet, "/api/v1/namespaces/default/configmaps/c", 404, `configmaps "c" not found`},
		{http.MethodGet, "/api/v1/namespaces/default/pods/p/status", 404, `pods "p" not found`},
	} {
		w := ts.do(c.method, c.path, "", "")
		var st metav1.Status
		if c.method != http.MethodHead {
			if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
				t.Errorf("%s %s = %d %q, not a Status", c.method, c.path, w.Code, w.Body)
				continue
			}
		}
		generic := c.message == notFound || c.message == notAllowed
		switch {
		case w.Code != c.code:
			t.Errorf("%s %s = %d %q, want %d", c.method, c.path, w.Code, st.Message, c.code)
		case c.method == http.MethodHead:
		case st.Message != c.message:
			t.Errorf("%s %s = %d %q, want %q", c.method, c.path, w.Code, st.Message, c.message)
		case generic && st.Details != nil && (st.Details.Kind != "" || st.Details.Name != "" || st.Details.Group != ""):
			t.Errorf("%s %s details %+v, want none", c.method, c.path, st.Details)
		}
	}
}

// Discovery and /version route GET only, except /apis and /apis/<group>,
// which take any method, as kube-apiserver 1.37.2 answers (recorded).
func TestNonResourceRouteMethods(t *testing.T) {
	ts := newTestServer(t)
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{http.MethodHead, "/api", 405},
		{http.MethodPost, "/api", 405},
		{http.MethodHead, "/api/v1", 405},
		{http.MethodPost, "/api/v1", 405},
		{http.MethodPut, "/api/v1", 405},
		{http.MethodDelete, "/api/v1", 405},
		{http.MethodPost, "/apis/apps/v1", 405},
		{http.MethodHead, "/apis/apps/v1", 405},
		{http.MethodPost, "/apis/apps/v9", 404},
		{http.MethodPost, "/version", 405},
		{http.MethodPost, "/version/", 405},
		{http.MethodHead, "/version", 405},
		{http.MethodHead, "/apis", 200},
		{http.MethodPost, "/apis", 200},
		{http.MethodPost, "/apis/apps", 200},
		{http.MethodHead, "/apis/apps", 200},
		{http.MethodGet, "/api/v1", 200},
		{http.MethodGet, "/version/x", 404},
	} {
		w := ts.do(c.method, c.path, "", "")
		if w.Code != c.code {
			t.Errorf("%s %s = %d %q, want %d", c.method, c.path, w.Code, w.Body, c.code)
		}
		var st metav1.Status
		if c.code >= 400 && c.method != http.MethodHead && (json.Unmarshal(w.Body.Bytes(), &st) != nil || int(st.Code) != c.code) {
			t.Errorf("%s %s = %q, want a Status of code %d", c.method, c.path, w.Body, c.code)
		}
	}
}
