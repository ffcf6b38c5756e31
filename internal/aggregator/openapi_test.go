package aggregator

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// TestOpenAPIV3: the remote server's index entries, with its own hashes,
// and its documents proxied as the requesting user; an unavailable
// APIService contributes nothing.
func TestOpenAPIV3(t *testing.T) {
	proxyCA, cert := newProxyIdentity(t)
	b := newBackend(t, proxyCA, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/openapi/v3":
			_, _ = io.WriteString(w, `{"paths":{"apis/wardle.example.com/v1alpha1":{"serverRelativeURL":"/openapi/v3/apis/wardle.example.com/v1alpha1?hash=AB"},`+
				`"apis/wardle.example.com/v1beta1":{"serverRelativeURL":"/openapi/v3/apis/wardle.example.com/v1beta1?hash=CD"}}}`)
		default:
			_, _ = io.WriteString(w, r.Header.Get("X-Remote-User")+" "+r.URL.Path+"?"+r.URL.RawQuery)
		}
	})
	st := newStored()
	s := wardle(t, st, b, true)
	a := New(Options{APIServices: st, Services: st, ProxyClientCert: cert})
	want := map[string]string{"apis/wardle.example.com/v1alpha1": "/openapi/v3/apis/wardle.example.com/v1alpha1?hash=AB",
		"apis/wardle.example.com/v1beta1": "/openapi/v3/apis/wardle.example.com/v1beta1?hash=CD"}
	if got := a.OpenAPIV3Paths(context.Background()); !reflect.DeepEqual(got, want) {
		t.Errorf("OpenAPIV3Paths = %v, want %v", got, want)
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/openapi/v3/apis/wardle.example.com/v1beta1?hash=CD", nil)
	if !a.ServeOpenAPIV3(w, r, authenticationv1.UserInfo{Username: "alice"}, "apis/wardle.example.com/v1beta1") ||
		w.Body.String() != "alice /openapi/v3/apis/wardle.example.com/v1beta1?hash=CD" {
		t.Errorf("ServeOpenAPIV3 answered %d %q, want the remote document fetched as alice", w.Code, w.Body.String())
	}
	if a.ServeOpenAPIV3(httptest.NewRecorder(), r, authenticationv1.UserInfo{}, "apis/other/v1") {
		t.Error("ServeOpenAPIV3 served a path no remote server has")
	}
	st.update(func() { s.Status.Conditions[0].Status = "False" })
	if got := a.OpenAPIV3Paths(context.Background()); len(got) != 0 {
		t.Errorf("OpenAPIV3Paths of an unavailable APIService = %v, want none", got)
	}
}
