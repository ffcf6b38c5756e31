package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const saPodYAML = `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  serviceAccountName: sa
  containers: [{name: c, image: busybox}]
`

const legacySecretYAML = `apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata:
  name: sa-token
  namespace: default
  annotations: {kubernetes.io/service-account.name: sa}
`

const selfSubjectReview = `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`

// bearer sends requests with nothing but a bearer token, trusting the
// server's CA.
type bearer struct {
	url    string
	client *http.Client
}

func newBearer(t *testing.T, a *admitd) bearer {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(a.DataDir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return bearer{url: a.URL, client: &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
}

func (b bearer) do(t *testing.T, token, method, path, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, b.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, data
}

// whoami is the user a SelfSubjectReview names, or the status code.
func (b bearer) whoami(t *testing.T, token string) (string, int) {
	t.Helper()
	code, _, body := b.do(t, token, http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews", selfSubjectReview)
	var r struct {
		Status struct {
			UserInfo struct {
				Username string              `json:"username"`
				Extra    map[string][]string `json:"extra"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	_ = json.Unmarshal(body, &r)
	return r.Status.UserInfo.Username, code
}

// Tokens from kubectl create token and from a legacy token Secret
// authenticate plain HTTPS requests as their service account, until what
// they are bound to is gone; the discovery documents verify them.
func TestServiceAccountTokens(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	b := newBearer(t, a)
	a.MustKubectl(t, "", "create", "serviceaccount", "sa", "-n", "default")
	a.MustKubectl(t, saPodYAML, "create", "-f", "-")
	token := strings.TrimSpace(a.MustKubectl(t, "", "create", "token", "sa", "-n", "default", "--bound-object-kind", "Pod", "--bound-object-name", "p"))

	if user, code := b.whoami(t, token); code != http.StatusCreated || user != "system:serviceaccount:default:sa" {
		t.Errorf("SelfSubjectReview with the pod-bound token = %d %q, want 201 system:serviceaccount:default:sa", code, user)
	}
	checkDiscovery(t, b, token)

	a.MustKubectl(t, "", "delete", "pod", "p", "-n", "default", "--grace-period=0", "--wait")
	if _, code := b.whoami(t, token); code != http.StatusUnauthorized {
		t.Errorf("SelfSubjectReview after the pod was deleted = %d, want 401", code)
	}

	a.MustKubectl(t, legacySecretYAML, "create", "-f", "-")
	legacy := waitForSecretToken(t, a)
	if user, code := b.whoami(t, legacy); code != http.StatusCreated || user != "system:serviceaccount:default:sa" {
		t.Errorf("SelfSubjectReview with the legacy token = %d %q, want 201 system:serviceaccount:default:sa", code, user)
	}
	a.MustKubectl(t, "", "delete", "secret", "sa-token", "-n", "default")
	if _, code := b.whoami(t, legacy); code != http.StatusUnauthorized {
		t.Errorf("SelfSubjectReview after the token Secret was deleted = %d, want 401", code)
	}
	if strings.Contains(a.Stderr.String(), token) || strings.Contains(a.Stderr.String(), legacy) {
		t.Error("the server logged a token")
	}
}

func waitForSecretToken(t *testing.T, a *admitd) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := a.MustKubectl(t, "", "get", "secret", "sa-token", "-n", "default", "-o", "jsonpath={.data.token}")
		if out != "" {
			tok, err := base64.StdEncoding.DecodeString(out)
			if err != nil {
				t.Fatal(err)
			}
			return string(tok)
		}
		if time.Now().After(deadline) {
			t.Fatal("the legacy token Secret was never filled")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkDiscovery reads the discovery document and key set (with the
// service account's own token: they are not public) and verifies token
// with the key set alone.
func checkDiscovery(t *testing.T, b bearer, token string) {
	t.Helper()
	code, h, body := b.do(t, token, http.MethodGet, "/.well-known/openid-configuration", "")
	var doc struct {
		Issuer  string   `json:"issuer"`
		JWKSURI string   `json:"jwks_uri"`
		Algs    []string `json:"id_token_signing_alg_values_supported"`
	}
	if code != http.StatusOK || h.Get("Content-Type") != "application/json" || json.Unmarshal(body, &doc) != nil ||
		doc.Issuer != "https://kubernetes.default.svc.cluster.local" || doc.JWKSURI != b.url+"/openid/v1/jwks" || len(doc.Algs) != 1 || doc.Algs[0] != "ES256" {
		t.Errorf("GET /.well-known/openid-configuration = %d %s %s", code, h.Get("Content-Type"), body)
	}
	code, h, body = b.do(t, token, http.MethodGet, "/openid/v1/jwks", "")
	if code != http.StatusOK || h.Get("Content-Type") != "application/jwk-set+json" {
		t.Fatalf("GET /openid/v1/jwks = %d %s %s", code, h.Get("Content-Type"), body)
	}
	if err := verifyES256(body, token); err != nil {
		t.Errorf("the JWKS does not verify the token: %v", err)
	}
	if err := verifyES256(body, token[:len(token)-4]+"AAAA"); err == nil {
		t.Error("the JWKS verifies a tampered token")
	}
}

// verifyES256 checks an ES256 compact JWS with the key of its kid in a
// JSON Web Key Set.
func verifyES256(jwks []byte, token string) error {
	var set struct {
		Keys []struct{ Kid, Kty, Crv, Alg, Use, X, Y string }
	}
	if err := json.Unmarshal(jwks, &set); err != nil {
		return err
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return errors.New("not a compact JWS")
	}
	var header struct{ Alg, Kid string }
	raw, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if err := json.Unmarshal(raw, &header); err != nil {
		return err
	}
	num := func(s string) *big.Int {
		b, _ := base64.RawURLEncoding.DecodeString(s)
		return new(big.Int).SetBytes(b)
	}
	for _, k := range set.Keys {
		if k.Kid != header.Kid {
			continue
		}
		if k.Kty != "EC" || k.Crv != "P-256" || k.Alg != "ES256" || k.Use != "sig" || header.Alg != "ES256" {
			return fmt.Errorf("unexpected key %+v for a token signed %s", k, header.Alg)
		}
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		if len(sig) != 64 {
			return errors.New("bad signature length")
		}
		digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: num(k.X), Y: num(k.Y)}
		if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			return errors.New("invalid signature")
		}
		return nil
	}
	return fmt.Errorf("no key with kid %q", header.Kid)
}
