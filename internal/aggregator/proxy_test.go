package aggregator

import (
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// TestServeProxy: a request for a remote group/version reaches the
// extension server over TLS verified with the caBundle, with the proxy
// client certificate, as the user in X-Remote-* headers, without the
// client's credentials or impersonation headers, the query re-encoded,
// and the answer streamed back; a Local or missing group/version is left
// to the server; an unavailable one, or one whose Service is gone, is
// upstream's 503 "service unavailable"; a redirect is refused.
func TestServeProxy(t *testing.T) {
	proxyCA, cert := newProxyIdentity(t)
	b := newBackend(t, proxyCA, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/apis/wardle.example.com/v1alpha1/redirect" {
			http.Redirect(w, r, "https://example.com/", http.StatusFound)
			return
		}
		w.Header().Set("Warning", `299 - "deprecated"`)
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, "flunders")
	})
	st := newStored()
	s := wardle(t, st, b, true)
	a := New(Options{APIServices: st, Services: st, ProxyClientCert: cert})
	user := authenticationv1.UserInfo{Username: "alice", UID: "u-1", Groups: []string{"devs", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"example.com/scope": {"a", "b"}}}

	r := httptest.NewRequest("GET", "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders?watch=1&b=2&a=1", nil)
	r.Header.Set("Authorization", "Bearer secret")
	r.Header.Set("Impersonate-User", "bob")
	r.Header.Set("X-Remote-User", "mallory")
	w := httptest.NewRecorder()
	w.Header().Set("Audit-Id", "audit-1")
	if served, refused := a.ServeProxy(w, r, user, "wardle.example.com", "v1alpha1"); !served || refused != 0 {
		t.Fatalf("ServeProxy = %v, %d for a remote APIService, want true, 0", served, refused)
	}
	if w.Code != http.StatusTeapot || w.Body.String() != "flunders" || w.Header().Get("Warning") != `299 - "deprecated"` {
		t.Errorf("proxied answer = %d %q %v, want the backend's 418 flunders with its warning", w.Code, w.Body.String(), w.Header())
	}
	got := <-b.requests
	want := http.Header{"X-Remote-User": {"alice"}, "X-Remote-Uid": {"u-1"}, "X-Remote-Group": {"devs", "system:authenticated"},
		"X-Remote-Extra-Example.com%2fscope": {"a", "b"}, "Audit-Id": {"audit-1"}}
	for k, v := range want {
		if !reflect.DeepEqual(got.Header[k], v) {
			t.Errorf("backend header %s = %q, want %q", k, got.Header[k], v)
		}
	}
	if got.Header.Get("Authorization") != "" || got.Header.Get("Impersonate-User") != "" || clientCertName(got) != "front-proxy-client" ||
		got.URL.RawQuery != "a=1&b=2&watch=1" || got.URL.Path != "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders" {
		t.Errorf("backend request %s?%s, client certificate %q, headers %v: want no credentials, the proxy certificate, the query sorted",
			got.URL.Path, got.URL.RawQuery, clientCertName(got), got.Header)
	}

	if served, _ := a.ServeProxy(httptest.NewRecorder(), httptest.NewRequest("GET", "/apis/apps/v1/deployments", nil), user, "apps", "v1"); served {
		t.Error("ServeProxy = true for a group/version without APIService")
	}
	w = httptest.NewRecorder()
	if _, refused := a.ServeProxy(w, httptest.NewRequest("GET", "/apis/wardle.example.com/v1alpha1/redirect", nil), user, "wardle.example.com", "v1alpha1"); refused != 0 {
		t.Errorf("redirect refused as %d by the proxy itself; upstream counts it as the backend's answer", refused)
	}
	if w.Code != http.StatusBadGateway || w.Body.String() != "the backend attempted to redirect this request, which is not permitted" {
		t.Errorf("redirect = %d %q, want upstream's 502", w.Code, w.Body.String())
	}
	st.update(func() { delete(st.services, "wardle/api") })
	w = httptest.NewRecorder()
	if _, refused := a.ServeProxy(w, httptest.NewRequest("GET", "/apis/wardle.example.com/v1alpha1", nil), user, "wardle.example.com", "v1alpha1"); refused != 503 {
		t.Errorf("service gone: refused %d, want 503 (the proxy's own answer)", refused)
	}
	if w.Code != http.StatusServiceUnavailable || w.Body.String() != "service unavailable\n" {
		t.Errorf("service gone = %d %q, want 503 service unavailable", w.Code, w.Body.String())
	}
	st.update(func() { s.Status.Conditions[0].Status = apiregistrationv1.ConditionFalse })
	w = httptest.NewRecorder()
	if _, refused := a.ServeProxy(w, httptest.NewRequest("GET", "/apis/wardle.example.com/v1alpha1", nil), user, "wardle.example.com", "v1alpha1"); refused != 503 {
		t.Errorf("unavailable: refused %d, want 503 (the proxy's own answer)", refused)
	}
	if w.Code != http.StatusServiceUnavailable || w.Body.String() != "service unavailable\n" {
		t.Errorf("unavailable = %d %q, want 503 service unavailable", w.Code, w.Body.String())
	}
}
