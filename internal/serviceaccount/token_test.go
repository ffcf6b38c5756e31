package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIssueSignsUpstreamClaims(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "team-a", UID: "sa-uid"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "pod-uid"}}
	now := time.Unix(1700000000, 0)
	for _, tc := range []struct {
		name string
		key  crypto.Signer
		alg  string
	}{{"RS256", rsaKey, "RS256"}, {"ES256", ecKey, "ES256"}} {
		t.Run(tc.name, func(t *testing.T) {
			iss, err := NewIssuer(tc.key, DefaultIssuer)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := iss.Issue(NewClaims(sa, Bound{Pod: pod}, now, 3600, 0, iss.Audiences))
			if err != nil {
				t.Fatal(err)
			}
			header := decodePart(t, tok, 0)
			if header["alg"] != tc.alg || header["kid"] == "" {
				t.Errorf("header = %v, want alg %s and a kid", header, tc.alg)
			}
			claims, err := iss.Verify(tok)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := map[string]any{
				"iss": DefaultIssuer, "sub": "system:serviceaccount:team-a:default",
				"aud": []any{DefaultIssuer}, "iat": 1700000000.0, "nbf": 1700000000.0, "exp": 1700003600.0,
				"kubernetes.io": map[string]any{"namespace": "team-a",
					"serviceaccount": map[string]any{"name": "default", "uid": "sa-uid"},
					"pod":            map[string]any{"name": "web", "uid": "pod-uid"}},
			}
			jti := claims["jti"]
			delete(claims, "jti")
			if s, _ := jti.(string); s == "" {
				t.Errorf("jti = %v, want a uuid", jti)
			}
			if !reflect.DeepEqual(claims, want) {
				t.Errorf("claims = %v\nwant %v", claims, want)
			}
			if _, err := iss.Verify(tok[:len(tok)-4] + "AAAA"); err == nil {
				t.Error("Verify(tampered token) = nil, want an error")
			}
		})
	}
}

func TestWarnAfterClaim(t *testing.T) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "b"}}
	c := NewClaims(sa, Bound{}, time.Unix(100, 0), ExtendedExpirationSeconds, WarnOnlyBoundTokenExpirationSeconds, nil)
	if c.Kubernetes.WarnAfter == nil || *c.Kubernetes.WarnAfter != 100+WarnOnlyBoundTokenExpirationSeconds {
		t.Errorf("warnafter = %v, want %d", c.Kubernetes.WarnAfter, 100+WarnOnlyBoundTokenExpirationSeconds)
	}
}

func decodePart(t *testing.T, tok string, i int) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts, want 3", len(parts))
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[i])
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLoadOrCreateKeyPersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pki", KeyFile)
	first, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v, want 0600", err, fi.Mode())
	}
	second, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if !first.(interface{ Equal(crypto.PrivateKey) bool }).Equal(second) {
		t.Error("LoadOrCreateKey read back a different key")
	}
	if err := os.WriteFile(path, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(path); err == nil {
		t.Error("LoadOrCreateKey(junk) = nil, want an error")
	}
}

func FuzzVerify(f *testing.F) {
	iss := NewEphemeralIssuer()
	tok, _ := iss.Issue(Claims{Subject: "x"})
	f.Add(tok)
	f.Add("a.b.c")
	f.Add("..")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = iss.Verify(s)
	})
}
