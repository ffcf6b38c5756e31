package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/pki"
	authenticationv1 "k8s.io/api/authentication/v1"
)

// issued is a client credential as a TLS client presents it.
type issued struct {
	tls  tls.Certificate
	leaf *x509.Certificate
}

// issue signs a certificate for subject with parent, by hand, so that tests
// can make what pki refuses to: intermediates, UID attributes, wrong usages.
func issue(t *testing.T, parent *pki.CA, subject pkix.Name, isCA bool, usage x509.ExtKeyUsage) (*pki.CA, issued) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               subject,
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{usage},
		BasicConstraintsValid: true,
		IsCA:                  isCA,
	}
	if isCA {
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.ExtKeyUsage = nil
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent.Cert, key.Public(), parent.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &pki.CA{Cert: cert, Key: key}, issued{tls: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, leaf: cert}
}

// newRoot returns a self-signed CA without a path length limit, so that it
// can sign intermediates (pki.NewCA limits its CAs to leaves).
func newRoot(t *testing.T) *pki.CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "root"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &pki.CA{Cert: cert, Key: key}
}

func withUID(cn string, uids ...string) pkix.Name {
	n := pkix.Name{CommonName: cn}
	for _, uid := range uids {
		n.ExtraNames = append(n.ExtraNames, pkix.AttributeTypeAndValue{Type: uidOID, Value: uid})
	}
	return n
}

func credentialID(c *x509.Certificate) map[string]authenticationv1.ExtraValue {
	sum := sha256.Sum256(c.Raw)
	return map[string]authenticationv1.ExtraValue{CredentialIDKey: {"X509SHA256=" + hex.EncodeToString(sum[:])}}
}

type authResult struct {
	User  authenticationv1.UserInfo
	OK    bool
	Error string
}

// startServer runs a TLS server that requests (but does not require or
// verify) client certificates, as kube-apiserver does with a client CA, and
// answers with what a authenticates.
func startServer(t *testing.T, ca *pki.CA, a Authenticator) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var res authResult
		var err error
		res.User, res.OK, err = a.Authenticate(r)
		if err != nil {
			res.Error = err.Error()
		}
		_ = json.NewEncoder(w).Encode(res)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert, ClientCAs: ca.Pool()}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// get calls srv presenting chain (the leaf first); nil presents nothing.
func get(t *testing.T, srv *httptest.Server, chain *tls.Certificate) authResult {
	t.Helper()
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if chain == nil {
			return &tls.Certificate{}, nil
		}
		return chain, nil
	}
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatalf("GET %s: %v", srv.URL, err)
	}
	defer resp.Body.Close()
	var res authResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestX509Authenticator(t *testing.T) {
	ca := newRoot(t)
	other, _ := pki.NewCA("other-ca")
	_, carol := issue(t, ca, pkix.Name{CommonName: "carol", Organization: []string{"dev", "ops"}}, false, x509.ExtKeyUsageClientAuth)
	_, withID := issue(t, ca, withUID("dave", "uid-1"), false, x509.ExtKeyUsageClientAuth)
	_, twoIDs := issue(t, ca, withUID("erin", "a", "b"), false, x509.ExtKeyUsageClientAuth)
	_, emptyID := issue(t, ca, withUID("fay", ""), false, x509.ExtKeyUsageClientAuth)
	_, noCN := issue(t, ca, pkix.Name{Organization: []string{"dev"}}, false, x509.ExtKeyUsageClientAuth)
	_, server := issue(t, ca, pkix.Name{CommonName: "srv"}, false, x509.ExtKeyUsageServerAuth)
	_, foreign := issue(t, other, pkix.Name{CommonName: "mallory"}, false, x509.ExtKeyUsageClientAuth)
	inter, interCert := issue(t, ca, pkix.Name{CommonName: "intermediate"}, true, 0)
	_, viaInter := issue(t, inter, pkix.Name{CommonName: "gus", Organization: []string{"g"}}, false, x509.ExtKeyUsageClientAuth)
	chained := viaInter.tls
	chained.Certificate = append(chained.Certificate, interCert.tls.Certificate[0])

	srv := startServer(t, ca, NewX509(ca.Pool()))
	tests := []struct {
		name    string
		chain   *tls.Certificate
		want    authenticationv1.UserInfo
		wantOK  bool
		wantErr string
	}{
		{name: "no certificate"},
		{
			name: "trusted client", chain: &carol.tls, wantOK: true,
			want: authenticationv1.UserInfo{Username: "carol", Groups: []string{"dev", "ops"}, Extra: credentialID(carol.leaf)},
		},
		{
			name: "UID attribute", chain: &withID.tls, wantOK: true,
			want: authenticationv1.UserInfo{Username: "dave", UID: "uid-1", Extra: credentialID(withID.leaf)},
		},
		{
			name: "through an intermediate", chain: &chained, wantOK: true,
			want: authenticationv1.UserInfo{Username: "gus", Groups: []string{"g"}, Extra: credentialID(viaInter.leaf)},
		},
		{name: "intermediate missing", chain: &viaInter.tls, wantErr: "certificate signed by unknown authority"},
		{name: "two UIDs", chain: &twoIDs.tls, wantErr: "expected 1 UID, but found multiple: [a b]"},
		{name: "empty UID", chain: &emptyID.tls, wantErr: "UID cannot be an empty string"},
		{name: "no common name names nobody", chain: &noCN.tls},
		{name: "server certificate", chain: &server.tls, wantErr: "certificate specifies an incompatible key usage"},
		{name: "other CA", chain: &foreign.tls, wantErr: "verifying certificate SN="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := get(t, srv, tt.chain)
			if got.OK != tt.wantOK || (got.Error == "") != (tt.wantErr == "") || !strings.Contains(got.Error, tt.wantErr) {
				t.Fatalf("Authenticate() = _, %v, %q, want %v, error containing %q", got.OK, got.Error, tt.wantOK, tt.wantErr)
			}
			if tt.wantOK && !reflect.DeepEqual(got.User, tt.want) {
				t.Errorf("Authenticate() = %+v, want %+v", got.User, tt.want)
			}
		})
	}
}

func TestLoadClientCAFile(t *testing.T) {
	ca, _ := pki.NewCA("a")
	other, _ := pki.NewCA("b")
	key, _ := ca.KeyPEM()
	dir := t.TempDir()
	tests := []struct {
		name    string
		data    []byte
		trusts  []*pki.CA
		wantErr bool
	}{
		{name: "one", data: ca.CertPEM, trusts: []*pki.CA{ca}},
		{name: "bundle with a key between", data: append(append(append([]byte{}, ca.CertPEM...), key...), other.CertPEM...), trusts: []*pki.CA{ca, other}},
		{name: "key only", data: key, wantErr: true},
		{name: "empty", data: nil, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			if err := os.WriteFile(path, tt.data, 0o600); err != nil {
				t.Fatal(err)
			}
			pool, err := LoadClientCAFile(path)
			if (err != nil) != tt.wantErr {
				t.Fatalf("LoadClientCAFile() error = %v, want error %v", err, tt.wantErr)
			}
			for _, c := range tt.trusts {
				if _, err := c.Cert.Verify(x509.VerifyOptions{Roots: pool}); err != nil {
					t.Errorf("LoadClientCAFile() pool does not trust %q: %v", c.Cert.Subject.CommonName, err)
				}
			}
		})
	}
	if _, err := LoadClientCAFile(filepath.Join(dir, "absent")); err == nil {
		t.Errorf("LoadClientCAFile(absent) error = nil, want an error")
	}
}

// A lone leaf's key is its chain key, found by the certificate's identity
// on the connection's later requests; the identities kept are bounded.
func TestVerifiedCacheKeysALeafByIdentity(t *testing.T) {
	ca := newRoot(t)
	_, carol := issue(t, ca, pkix.Name{CommonName: "carol"}, false, x509.ExtKeyUsageClientAuth)
	_, dave := issue(t, ca, pkix.Name{CommonName: "dave"}, false, x509.ExtKeyUsageClientAuth)
	var c verifiedCache
	leaf := []*x509.Certificate{carol.leaf}
	if got, want := c.keyOf(leaf), chainKey(leaf); got != want {
		t.Fatalf("keyOf = %x, want the chain key %x", got, want)
	}
	if got, want := c.keyOf(leaf), chainKey(leaf); got != want || len(c.leaves) != 1 {
		t.Fatalf("keyOf again = %x (%d identities kept), want %x from the one kept", got, len(c.leaves), want)
	}
	pair := []*x509.Certificate{dave.leaf, carol.leaf}
	if got, want := c.keyOf(pair), chainKey(pair); got != want || len(c.leaves) != 1 {
		t.Errorf("keyOf(chain of two) = %x (%d identities kept), want %x and no identity kept", got, len(c.leaves), want)
	}
	for range verifiedCacheSize + 5 {
		copied := *dave.leaf // another parse of the same certificate: another identity
		c.keyOf([]*x509.Certificate{&copied})
	}
	if n := len(c.leaves); n > verifiedCacheSize {
		t.Errorf("%d identities kept, want at most %d", n, verifiedCacheSize)
	}
}
