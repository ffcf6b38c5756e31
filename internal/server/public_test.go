package server

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The health and version endpoints are authenticated and authorized as
// every other path, as kube-apiserver's: a rejected token is a 401 even
// there; requests without credentials get the health paths (not /version)
// although anonymous access is off; RBAC lets every user get them and
// nothing more (system:public-info-viewer).
func TestPublicEndpointsAreAuthenticated(t *testing.T) {
	o := testOptions(t)
	o.TokenAuthFile = filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(o.TokenAuthFile, []byte("bob-token,bob,7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := startWith(t, o)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	do := func(method, path, token string) (int, string) {
		req, _ := http.NewRequest(method, s.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, tc := range []struct {
		method, path, token string
		code                int
		body                string
	}{
		{"GET", "/healthz", "", 200, "ok"},
		{"GET", "/livez", "", 200, "ok"},
		{"GET", "/readyz", "", 200, "ok"},
		{"GET", "/healthz", "bogus", 401, `"reason":"Unauthorized"`},
		{"GET", "/readyz", "bogus", 401, `"reason":"Unauthorized"`},
		{"GET", "/version", "bogus", 401, `"reason":"Unauthorized"`},
		{"GET", "/version", "", 401, `"reason":"Unauthorized"`},
		{"GET", "/version", "bob-token", 200, `"gitVersion"`},
		{"GET", "/healthz", "bob-token", 200, "ok"},
		{"POST", "/healthz", "bob-token", 403, `cannot post path \"/healthz\"`},
		{"POST", "/healthz", "", 403, `User \"system:anonymous\" cannot post path \"/healthz\"`},
		{"POST", "/version", "bob-token", 403, `cannot post path \"/version\"`},
	} {
		code, body := do(tc.method, tc.path, tc.token)
		if code != tc.code || !strings.Contains(body, tc.body) {
			t.Errorf("%s %s (token %q) = %d %.200s, want %d with %s", tc.method, tc.path, tc.token, code, body, tc.code, tc.body)
		}
	}
}
