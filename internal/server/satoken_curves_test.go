package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/pki"
	"github.com/admitd/admitd/internal/serviceaccount"
)

// writeSigningKey writes a new ECDSA key on curve to dir/name.
func writeSigningKey(t *testing.T, curve elliptic.Curve, dir, name string) (string, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	data, err := pki.EncodePrivateKeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, key
}

// A P-384 signing key signs ES384 TokenRequest tokens that authenticate; a
// P-521 key in --service-account-key-file verifies ES512 tokens; the JWKS
// and the discovery document publish both with their curves and
// algorithms.
func TestServiceAccountTokensES384AndES512(t *testing.T) {
	dir := t.TempDir()
	signing, _ := writeSigningKey(t, elliptic.P384(), dir, "signing.key")
	other, otherKey := writeSigningKey(t, elliptic.P521(), dir, "other.key")
	s, admin := startForTokens(t, ServiceAccountOptions{SigningKeyFile: signing, KeyFiles: []string{signing, other}})
	ctx := context.Background()
	sa, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bot"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "bot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	otherIssuer, err := serviceaccount.NewIssuer(otherKey, serviceaccount.DefaultIssuer)
	if err != nil {
		t.Fatal(err)
	}
	es512, err := otherIssuer.Issue(serviceaccount.NewClaims(sa, serviceaccount.Bound{}, time.Now(), 3600, 0, otherIssuer.Audiences))
	if err != nil {
		t.Fatal(err)
	}
	for alg, tok := range map[string]string{"ES384": tr.Status.Token, "ES512": es512} {
		header, _ := base64.RawURLEncoding.DecodeString(tok[:strings.Index(tok, ".")])
		if !strings.Contains(string(header), `"alg":"`+alg+`"`) {
			t.Errorf("token header %s, want alg %s", header, alg)
		}
		if user, err := whoami(t, bearerClient(s, tok)); err != nil || user.Username != "system:serviceaccount:default:bot" {
			t.Errorf("%s token: user %+v, %v; want the service account", alg, user, err)
		}
	}

	raw, err := admin.CoreV1().RESTClient().Get().AbsPath(serviceaccount.JWKSPath).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []struct{ Kty, Crv, Alg, Use string }
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, k := range set.Keys {
		if k.Kty != "EC" || k.Use != "sig" {
			t.Errorf("JWK %+v, want an EC signing key", k)
		}
		got[k.Crv] = k.Alg
	}
	if len(got) != 2 || got["P-384"] != "ES384" || got["P-521"] != "ES512" {
		t.Errorf("JWKS %s, want P-384/ES384 and P-521/ES512", raw)
	}
	raw, err = admin.CoreV1().RESTClient().Get().AbsPath(serviceaccount.OpenIDConfigPath).DoRaw(ctx)
	if err != nil || !strings.Contains(string(raw), `"id_token_signing_alg_values_supported":["ES384","ES512"]`) {
		t.Errorf("discovery document %s (%v), want ES384 and ES512", raw, err)
	}
}
