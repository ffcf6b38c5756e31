package auth

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/admitd/admitd/internal/pki"
	authenticationv1 "k8s.io/api/authentication/v1"
)

const testTokens = `tok-admin,admin,1,"system:masters"
tok-plain,plain,2
tok-authd,already,3,"system:authenticated,x"
tok-unauthd,odd,4,"system:unauthenticated"
tok-anon,system:anonymous,5
`

func TestNew(t *testing.T) {
	tokens, err := ParseTokenFile(strings.NewReader(testTokens), "tokens.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := pki.NewCA("client-ca")
	other, _ := pki.NewCA("other-ca")
	_, carol := issue(t, ca, pkix.Name{CommonName: "carol", Organization: []string{"dev"}}, false, x509.ExtKeyUsageClientAuth)
	_, mallory := issue(t, other, pkix.Name{CommonName: "mallory"}, false, x509.ExtKeyUsageClientAuth)

	anonymous := &authenticationv1.UserInfo{Username: Anonymous, Groups: []string{AllUnauthenticated}}
	admin := &authenticationv1.UserInfo{Username: "admin", UID: "1", Groups: []string{"system:masters", AllAuthenticated}}
	tests := []struct {
		name      string
		header    string
		cert      *x509.Certificate
		anonymous bool
		want      *authenticationv1.UserInfo // nil: not authenticated
		wantErr   string
	}{
		{name: "nothing", want: nil},
		{name: "nothing, anonymous", anonymous: true, want: anonymous},
		{name: "token", header: "Bearer tok-admin", want: admin},
		{name: "token, anonymous", header: "Bearer tok-admin", anonymous: true, want: admin},
		{name: "no groups", header: "Bearer tok-plain", want: &authenticationv1.UserInfo{Username: "plain", UID: "2", Groups: []string{AllAuthenticated}}},
		{name: "already authenticated group", header: "Bearer tok-authd", want: &authenticationv1.UserInfo{Username: "already", UID: "3", Groups: []string{AllAuthenticated, "x"}}},
		{name: "unauthenticated group kept alone", header: "Bearer tok-unauthd", want: &authenticationv1.UserInfo{Username: "odd", UID: "4", Groups: []string{AllUnauthenticated}}},
		{name: "a token user called system:anonymous gets no group", header: "Bearer tok-anon", want: &authenticationv1.UserInfo{Username: Anonymous, UID: "5"}},
		{name: "unknown token", header: "Bearer nope", wantErr: "invalid bearer token"},
		{name: "unknown token is not anonymous", header: "Bearer nope", anonymous: true, wantErr: "invalid bearer token"},
		{name: "not a bearer header, anonymous", header: "Basic abc", anonymous: true, want: anonymous},
		{
			name: "certificate before token", header: "Bearer tok-admin", cert: carol.leaf,
			want: &authenticationv1.UserInfo{Username: "carol", Groups: []string{"dev", AllAuthenticated}, Extra: credentialID(carol.leaf)},
		},
		{name: "untrusted certificate, good token", header: "Bearer tok-admin", cert: mallory.leaf, want: admin},
		{name: "untrusted certificate, anonymous", cert: mallory.leaf, anonymous: true, wantErr: "certificate signed by unknown authority"},
		{name: "untrusted certificate, bad token", header: "Bearer nope", cert: mallory.leaf, wantErr: "unknown authority, invalid bearer token]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(Options{X509: NewX509(ca.Pool()), Tokens: tokens, Anonymous: tt.anonymous})
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/api", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			if tt.cert != nil {
				r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{tt.cert}}
			}
			got, ok, err := a.Authenticate(r)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Authenticate() error = %v, want %q", err, tt.wantErr)
			}
			if ok != (tt.want != nil) {
				t.Fatalf("Authenticate() ok = %v, want %v", ok, tt.want != nil)
			}
			if ok && !reflect.DeepEqual(got, *tt.want) {
				t.Errorf("Authenticate() = %+v, want %+v", got, *tt.want)
			}
		})
	}
}

func TestNewConfigurations(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr bool
		wantOK  bool
	}{
		{name: "nothing configured", opts: Options{}, wantErr: true},
		{name: "anonymous only", opts: Options{Anonymous: true}, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(tt.opts)
			if (err != nil) != tt.wantErr {
				t.Fatalf("New(%+v) error = %v, want error %v", tt.opts, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			got, ok, err := a.Authenticate(httptest.NewRequest("GET", "/", nil))
			if ok != tt.wantOK || err != nil || got.Username != Anonymous {
				t.Errorf("Authenticate() = %+v, %v, %v, want %s", got, ok, err, Anonymous)
			}
		})
	}
}

func TestUnion(t *testing.T) {
	user := authenticationv1.UserInfo{Username: "u"}
	found := AuthenticatorFunc(func(*http.Request) (authenticationv1.UserInfo, bool, error) { return user, true, nil })
	none := AuthenticatorFunc(func(*http.Request) (authenticationv1.UserInfo, bool, error) {
		return authenticationv1.UserInfo{}, false, nil
	})
	failing := func(msg string) Authenticator {
		return AuthenticatorFunc(func(*http.Request) (authenticationv1.UserInfo, bool, error) {
			return authenticationv1.UserInfo{}, false, errors.New(msg)
		})
	}
	tests := []struct {
		name    string
		a       Authenticator
		wantOK  bool
		wantErr string
	}{
		{"empty", Union(), false, ""},
		{"none", Union(none, none), false, ""},
		{"error then user", Union(failing("a"), found), true, ""},
		{"errors aggregated", Union(failing("a"), none, failing("b")), false, "[a, b]"},
		{"fail on error stops", UnionFailOnError(failing("a"), found), false, "a"},
		{"fail on error, none then user", UnionFailOnError(none, found), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, err := tt.a.Authenticate(httptest.NewRequest("GET", "/", nil))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if ok != tt.wantOK || gotErr != tt.wantErr {
				t.Errorf("Authenticate() = _, %v, %q, want %v, %q", ok, gotErr, tt.wantOK, tt.wantErr)
			}
		})
	}
}

func TestWithAuthenticatedGroupDoesNotAlias(t *testing.T) {
	groups := make([]string, 1, 4)
	groups[0] = "dev"
	inner := AuthenticatorFunc(func(*http.Request) (authenticationv1.UserInfo, bool, error) {
		return authenticationv1.UserInfo{Username: "u", Groups: groups}, true, nil
	})
	got, _, _ := WithAuthenticatedGroup(inner).Authenticate(httptest.NewRequest("GET", "/", nil))
	if !reflect.DeepEqual(got.Groups, []string{"dev", AllAuthenticated}) {
		t.Errorf("Authenticate() groups = %q, want [dev %s]", got.Groups, AllAuthenticated)
	}
	if full := groups[:2]; full[1] != "" {
		t.Errorf("WithAuthenticatedGroup wrote %q into the authenticator's slice", full[1])
	}
}

func TestUnauthorized(t *testing.T) {
	err := Unauthorized()
	got, jerr := json.Marshal(err.Status())
	if jerr != nil {
		t.Fatal(jerr)
	}
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`
	if string(got) != want {
		t.Errorf("json.Marshal(Unauthorized().Status()) = %s, want %s", got, want)
	}
	if err.Error() != "Unauthorized" {
		t.Errorf("Unauthorized().Error() = %q, want %q", err.Error(), "Unauthorized")
	}
}

// With AnonymousPaths and without Anonymous, a request without credentials
// is system:anonymous on those exact paths only; a rejected token stays
// rejected there.
func TestAnonymousPaths(t *testing.T) {
	tokens, err := ParseTokenFile(strings.NewReader(testTokens), "tokens.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Tokens: tokens, AnonymousPaths: []string{"/healthz", "/readyz"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, header string
		wantUser     string
		wantErr      bool
	}{
		{path: "/healthz", wantUser: Anonymous},
		{path: "/readyz", wantUser: Anonymous},
		{path: "/healthz/ping"},
		{path: "/version"},
		{path: "/api"},
		{path: "/healthz", header: "Bearer nope", wantErr: true},
		{path: "/healthz", header: "Bearer tok-plain", wantUser: "plain"},
	} {
		r := httptest.NewRequest("GET", tc.path, nil)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		got, ok, err := a.Authenticate(r)
		if (err != nil) != tc.wantErr || ok != (tc.wantUser != "") || got.Username != tc.wantUser {
			t.Errorf("%s %q: Authenticate() = %q, %v, %v; want %q (error %v)", tc.path, tc.header, got.Username, ok, err, tc.wantUser, tc.wantErr)
		}
	}
}
