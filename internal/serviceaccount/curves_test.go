package serviceaccount

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ecCurves are the curves a signing key may use, with the algorithm
// upstream signs with and the JWS signature length (RFC 7518 3.4).
var ecCurves = []struct {
	curve  elliptic.Curve
	alg    string
	sigLen int
}{
	{elliptic.P256(), "ES256", 64},
	{elliptic.P384(), "ES384", 96},
	{elliptic.P521(), "ES512", 132},
}

// writeECKey writes key to a PEM file in the form given ("EC PRIVATE KEY"
// or "PRIVATE KEY"), as --service-account-signing-key-file.
func writeECKey(t *testing.T, key *ecdsa.PrivateKey, form string) string {
	t.Helper()
	var der []byte
	var err error
	if form == "PRIVATE KEY" {
		der, err = x509.MarshalPKCS8PrivateKey(key)
	} else {
		der, err = x509.MarshalECPrivateKey(key)
	}
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sa.key")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: form, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A key on each curve signs with upstream's algorithm for it; its tokens
// authenticate with the key read from --service-account-key-file, and the
// JWKS publishes the key with its curve and algorithm.
func TestECDSACurvesSignAndVerify(t *testing.T) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "bot", UID: "sa-1"}}
	now := time.Now()
	for _, tc := range ecCurves {
		for _, form := range []string{"EC PRIVATE KEY", "PRIVATE KEY"} {
			t.Run(tc.alg+"/"+form, func(t *testing.T) {
				generated, err := ecdsa.GenerateKey(tc.curve, rand.Reader)
				if err != nil {
					t.Fatal(err)
				}
				path := writeECKey(t, generated, form)
				key, err := LoadOrCreateKey(path)
				if err != nil {
					t.Fatal(err)
				}
				iss, err := NewIssuer(key, DefaultIssuer)
				if err != nil {
					t.Fatalf("NewIssuer(%s key): %v", tc.curve.Params().Name, err)
				}
				tok, err := iss.Issue(NewClaims(sa, Bound{}, now, 3600, 0, iss.Audiences))
				if err != nil {
					t.Fatal(err)
				}
				if h := decodePart(t, tok, 0); h["alg"] != tc.alg || h["kid"] == "" {
					t.Errorf("header = %v, want alg %s and a kid", h, tc.alg)
				}
				sig, err := base64.RawURLEncoding.DecodeString(tok[strings.LastIndex(tok, ".")+1:])
				if err != nil || len(sig) != tc.sigLen {
					t.Errorf("signature: %d bytes, %v; want %d", len(sig), err, tc.sigLen)
				}

				keys, err := ReadKeyFiles(path)
				if err != nil {
					t.Fatal(err)
				}
				a := &Authenticator{Issuers: []string{DefaultIssuer}, Keys: keys, Audiences: iss.Audiences,
					Objects: objects{"serviceaccount/team/bot": sa}}
				user, _, ok, err := a.AuthenticateToken(context.Background(), tok, nil)
				if !ok || err != nil || user.Username != "system:serviceaccount:team:bot" {
					t.Errorf("AuthenticateToken = %v, %v, %v; want the service account", user.Username, ok, err)
				}
				if _, _, ok, err := a.AuthenticateToken(context.Background(), tok[:len(tok)-4]+"AAAA", nil); ok || err == nil {
					t.Errorf("AuthenticateToken(tampered) = %v, %v; want an error", ok, err)
				}

				m, err := NewOpenIDMetadata(DefaultIssuer, "", "127.0.0.1:6443", keys)
				if err != nil {
					t.Fatal(err)
				}
				var set struct{ Keys []jwk }
				if err := json.Unmarshal(m.KeySet, &set); err != nil || len(set.Keys) != 1 {
					t.Fatalf("key set %s: %v, want one key", m.KeySet, err)
				}
				got := set.Keys[0]
				size := tc.sigLen / 2
				x, _ := base64.RawURLEncoding.DecodeString(got.X)
				y, _ := base64.RawURLEncoding.DecodeString(got.Y)
				if got.Kty != "EC" || got.Crv != tc.curve.Params().Name || got.Alg != tc.alg || got.Use != "sig" ||
					len(x) != size || len(y) != size {
					t.Errorf("JWK = %+v, want EC %s %s with %d-byte coordinates", got, got.Crv, tc.alg, size)
				}
				if !strings.Contains(string(m.Config), `"id_token_signing_alg_values_supported":["`+tc.alg+`"]`) {
					t.Errorf("discovery document %s, want %s its only algorithm", m.Config, tc.alg)
				}
				if err := verifyWithJWKS(set.Keys, tok); err != nil {
					t.Errorf("the JWKS does not verify the token: %v", err)
				}
			})
		}
	}
}

// A token verifies only with its own key, whatever the curves.
func TestECDSACurvesDoNotCrossVerify(t *testing.T) {
	var issuers []*Issuer
	for _, tc := range ecCurves {
		k, err := ecdsa.GenerateKey(tc.curve, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		iss, err := NewIssuer(k, DefaultIssuer)
		if err != nil {
			t.Fatal(err)
		}
		issuers = append(issuers, iss)
	}
	for i, signer := range issuers {
		tok, err := signer.Issue(Claims{Subject: "x", Audiences: signer.Audiences, Expiry: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		// Without its kid the token is tried against every key, as one
		// without a kid is.
		parts, _ := splitJWS(tok)
		for j, verifier := range issuers {
			keys, _ := NewKeys(verifier.key)
			err := jwtCheck{keys: keys}.verify(parts, signer.alg, "")
			if (err == nil) != (i == j) {
				t.Errorf("%s token verified by the %s key: %v", ecCurves[i].alg, ecCurves[j].alg, err)
			}
		}
	}
}

func TestUnsupportedCurveRefused(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewIssuer(k, DefaultIssuer); err == nil || !strings.Contains(err.Error(), "P-224") {
		t.Errorf("NewIssuer(P-224 key) = %v, want an error naming the curve", err)
	}
}
