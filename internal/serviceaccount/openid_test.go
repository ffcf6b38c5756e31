package serviceaccount

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOpenIDMetadata(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := NewIssuer(rsaKey, "https://issuer.example")
	if err != nil {
		t.Fatal(err)
	}
	ec := NewEphemeralIssuer()
	keys, err := NewKeys(rsaKey, ec.key.Public())
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewOpenIDMetadata("https://issuer.example", "", "10.0.0.1:6443", keys)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"issuer":"https://issuer.example","jwks_uri":"https://10.0.0.1:6443/openid/v1/jwks",` +
		`"response_types_supported":["id_token"],"subject_types_supported":["public"],` +
		`"id_token_signing_alg_values_supported":["ES256","RS256"]}`
	if string(m.Config) != want {
		t.Errorf("config = %s\nwant %s", m.Config, want)
	}
	var set struct{ Keys []jwk }
	if err := json.Unmarshal(m.KeySet, &set); err != nil || len(set.Keys) != 2 {
		t.Fatalf("key set %s: %v, want two keys", m.KeySet, err)
	}
	tok, err := signer.Issue(Claims{Subject: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyWithJWKS(set.Keys, tok); err != nil {
		t.Errorf("the JWKS does not verify a token: %v", err)
	}
	if err := verifyWithJWKS(set.Keys, tok[:len(tok)-4]+"AAAA"); err == nil {
		t.Error("the JWKS verifies a tampered token")
	}
}

func TestOpenIDMetadataRefuses(t *testing.T) {
	keys, _ := NewKeys(NewEphemeralIssuer().key)
	for _, tc := range []struct{ issuer, jwksURI, external string }{
		{"kubernetes/serviceaccount", "", "h:1"},
		{"http://issuer", "", "h:1"},
		{"https://issuer?q=1", "", "h:1"},
		{"https://issuer", "", ""},
	} {
		if _, err := NewOpenIDMetadata(tc.issuer, tc.jwksURI, tc.external, keys); err == nil {
			t.Errorf("NewOpenIDMetadata(%q, %q, %q) = nil error, want one", tc.issuer, tc.jwksURI, tc.external)
		}
	}
	m, err := NewOpenIDMetadata("https://issuer", "https://keys.example/jwks", "", keys)
	if err != nil || !strings.Contains(string(m.Config), `"jwks_uri":"https://keys.example/jwks"`) {
		t.Errorf("with --service-account-jwks-uri: %v, %s", err, m.Config)
	}
}

// verifyWithJWKS verifies tok with the key of its kid, rebuilt from the JWK
// alone, as a relying party would.
func verifyWithJWKS(keys []jwk, tok string) error {
	parts, err := splitJWS(tok)
	if err != nil {
		return err
	}
	header := map[string]string{}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if err := json.Unmarshal(raw, &header); err != nil {
		return err
	}
	num := func(s string) *big.Int {
		b, _ := base64.RawURLEncoding.DecodeString(s)
		return new(big.Int).SetBytes(b)
	}
	for _, k := range keys {
		if k.Kid != header["kid"] || k.Use != "sig" {
			continue
		}
		var pub any = &rsa.PublicKey{N: num(k.N), E: int(num(k.E).Int64())}
		if k.Kty == "EC" {
			curves := map[string]elliptic.Curve{"P-256": elliptic.P256(), "P-384": elliptic.P384(), "P-521": elliptic.P521()}
			if curves[k.Crv] == nil {
				return fmt.Errorf("JWK curve %q", k.Crv)
			}
			pub = &ecdsa.PublicKey{Curve: curves[k.Crv], X: num(k.X), Y: num(k.Y)}
		}
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		return verifySignature(pub, k.Alg, []byte(parts[0]+"."+parts[1]), sig)
	}
	return os.ErrNotExist
}

func TestRotatedKeysAndIssuers(t *testing.T) {
	old, current, stranger := NewEphemeralIssuer(), NewEphemeralIssuer(), NewEphemeralIssuer()
	old.Issuer = "https://old.example"
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "bot", UID: "sa-1"}}
	keyFile := filepath.Join(t.TempDir(), "keys.pem")
	pemOf := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	pub, _ := x509.MarshalPKIXPublicKey(old.key.Public())
	priv, _ := x509.MarshalECPrivateKey(current.key.(*ecdsa.PrivateKey))
	if err := os.WriteFile(keyFile, append(pemOf("PUBLIC KEY", pub), pemOf("EC PRIVATE KEY", priv)...), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := ReadKeyFiles(keyFile)
	if err != nil || len(keys) != 2 {
		t.Fatalf("ReadKeyFiles = %d keys, %v; want 2", len(keys), err)
	}
	a := &Authenticator{Issuers: []string{DefaultIssuer, "https://old.example"}, Keys: keys,
		Audiences: []string{DefaultIssuer}, Objects: objects{"serviceaccount/team/bot": sa}}
	for _, tc := range []struct {
		name   string
		issuer *Issuer
		ok     bool
	}{{"current key", current, true}, {"old key and issuer", old, true}, {"unknown key", stranger, false}} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := tc.issuer.Issue(NewClaims(sa, Bound{}, time.Now(), 3600, 0, []string{DefaultIssuer}))
			if err != nil {
				t.Fatal(err)
			}
			_, _, ok, err := a.AuthenticateToken(context.Background(), tok, nil)
			if ok != tc.ok || (err == nil) != tc.ok {
				t.Errorf("AuthenticateToken = %v, %v; want ok %v", ok, err, tc.ok)
			}
		})
	}
	if k := keys.forID(keys[1].KeyID); !reflect.DeepEqual(k, keys[1:]) {
		t.Errorf("forID(kid of the second key) = %v, want only that key", k)
	}
}

func FuzzParseKeysPEM(f *testing.F) {
	der, _ := x509.MarshalPKIXPublicKey(NewEphemeralIssuer().key.Public())
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	f.Add([]byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = NewKeys(parseKeysPEM(data)...)
	})
}

func FuzzJWTCheck(f *testing.F) {
	iss := NewEphemeralIssuer()
	tok, _ := iss.IssueLegacy(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "b"}}, &corev1.Secret{})
	f.Add(tok)
	f.Add("eyJhbGciOiJub25lIn0.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50In0.")
	keys, _ := NewKeys(iss.key)
	check := jwtCheck{issuers: []string{LegacyIssuer}, keys: keys, audiences: iss.Audiences}
	f.Fuzz(func(t *testing.T, token string) {
		var reg registered
		var c legacyClaims
		if _, ok, err := check.check(token, nil, &reg, &c); ok && err != nil {
			t.Fatalf("check = ok with error %v", err)
		}
	})
}
