package auth

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/admitd/admitd/internal/pki"
)

func withPeer(r *http.Request, c issued) *http.Request {
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c.leaf}}
	return r
}

// TestRequestHeaderAuthenticator: a front proxy's certificate, verified and
// with an allowed name, lets its headers name the user, UID, groups and
// extras (keys lower-cased and %-decoded), which are then removed from the
// request; another certificate, another name, or no username header do not.
// The chain tries the front proxy before x509, as upstream.
func TestRequestHeaderAuthenticator(t *testing.T) {
	proxyCA, err := pki.NewCA("front-proxy-ca")
	if err != nil {
		t.Fatal(err)
	}
	clientCA, err := pki.NewCA("client-ca")
	if err != nil {
		t.Fatal(err)
	}
	_, proxy := issue(t, proxyCA, pkix.Name{CommonName: "front-proxy-client"}, false, x509.ExtKeyUsageClientAuth)
	_, other := issue(t, proxyCA, pkix.Name{CommonName: "someone-else"}, false, x509.ExtKeyUsageClientAuth)
	_, user := issue(t, clientCA, pkix.Name{CommonName: "jane", Organization: []string{"devs"}}, false, x509.ExtKeyUsageClientAuth)
	rh := NewRequestHeader(RequestHeaderOptions{ClientCA: proxyCA.Pool(), AllowedNames: []string{"front-proxy-client"},
		UsernameHeaders: []string{"X-Remote-User"}, UIDHeaders: []string{"X-Remote-Uid"}, GroupHeaders: []string{"X-Remote-Group"},
		ExtraHeaderPrefixes: []string{"X-Remote-Extra-"}})
	headers := func() *http.Request {
		r := httptest.NewRequest("GET", "/api", nil)
		r.Header.Set("X-Remote-User", "alice")
		r.Header.Set("X-Remote-Uid", "a-1")
		r.Header["X-Remote-Group"] = []string{"team-a", "", "team-b"}
		r.Header.Add("X-Remote-Extra-Scopes", "read")
		r.Header.Add("X-Remote-Extra-Scopes", "write")
		r.Header.Add("X-Remote-Extra-Example.com%2fpath", "v")
		return r
	}

	r := withPeer(headers(), proxy)
	got, ok, err := rh.Authenticate(r)
	want := authenticationv1.UserInfo{Username: "alice", UID: "a-1", Groups: []string{"team-a", "team-b"},
		Extra: map[string]authenticationv1.ExtraValue{"scopes": {"read", "write"}, "example.com/path": {"v"}}}
	if err != nil || !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("Authenticate(front proxy) = %+v, %v, %v; want %+v", got, ok, err, want)
	}
	for k := range r.Header {
		if strings.HasPrefix(k, "X-Remote-") {
			t.Errorf("header %s left on the request after authentication", k)
		}
	}
	if _, ok, err := rh.Authenticate(withPeer(headers(), other)); ok || err == nil || err.Error() != "x509: subject with cn=someone-else is not in the allowed list" {
		t.Errorf("Authenticate(other name) = %v, %v; want the allowed-list error", ok, err)
	}
	if _, ok, err := rh.Authenticate(withPeer(headers(), user)); ok || err == nil {
		t.Errorf("Authenticate(client CA certificate) = %v, %v; want a verification error", ok, err)
	}
	if _, ok, err := rh.Authenticate(withPeer(httptest.NewRequest("GET", "/", nil), proxy)); ok || err != nil {
		t.Errorf("Authenticate(no username header) = %v, %v; want no credential", ok, err)
	}

	chain, err := New(Options{RequestHeader: rh, X509: NewX509(clientCA.Pool())})
	if err != nil {
		t.Fatal(err)
	}
	if u, ok, err := chain.Authenticate(withPeer(headers(), proxy)); !ok || err != nil || u.Username != "alice" || !reflect.DeepEqual(u.Groups, []string{"team-a", "team-b", AllAuthenticated}) {
		t.Errorf("chain(front proxy) = %+v, %v, %v; want alice in team-a, team-b, system:authenticated", u, ok, err)
	}
	if u, ok, err := chain.Authenticate(withPeer(headers(), user)); !ok || err != nil || u.Username != "jane" {
		t.Errorf("chain(client certificate with headers) = %+v, %v, %v; want jane: the headers are not trusted", u, ok, err)
	}
}
