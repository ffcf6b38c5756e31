package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/internal/pki"
	"github.com/admitd/admitd/internal/serviceaccount"
)

// startForTokens starts a whole admitd on 127.0.0.1:0 and returns it with
// an administrator's clientset.
func startForTokens(t *testing.T, sa ServiceAccountOptions) (*Server, kubernetes.Interface) {
	t.Helper()
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.ServiceAccounts = sa
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: s.URL, QPS: -1,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM, CertData: s.AdminCertPEM, KeyData: s.AdminKeyPEM}})
	return s, cs
}

// bearerClient is a clientset with nothing but the token and the CA.
func bearerClient(s *Server, token string) kubernetes.Interface {
	return kubernetes.NewForConfigOrDie(&rest.Config{Host: s.URL, BearerToken: token, QPS: -1,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM}})
}

func whoami(t *testing.T, cs kubernetes.Interface) (authenticationv1.UserInfo, error) {
	t.Helper()
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}

func TestPodBoundTokenAuthenticatesUntilThePodIsDeleted(t *testing.T) {
	s, admin := startForTokens(t, ServiceAccountOptions{})
	ctx := context.Background()
	sa, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bot"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := admin.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{ServiceAccountName: "bot", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "bot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	user, err := whoami(t, bearerClient(s, tr.Status.Token))
	if err != nil {
		t.Fatalf("SelfSubjectReview with the token: %v", err)
	}
	if user.Username != "system:serviceaccount:default:bot" || user.UID != string(sa.UID) ||
		strings.Join(user.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:default,system:authenticated" ||
		user.Extra[serviceaccount.PodNameKey][0] != "p" || user.Extra[serviceaccount.PodUIDKey][0] != string(pod.UID) ||
		!strings.HasPrefix(user.Extra["authentication.kubernetes.io/credential-id"][0], "JTI=") {
		t.Errorf("user = %+v, want the service account with its groups and pod extras", user)
	}
	zero := int64(0)
	if err := admin.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if _, err := whoami(t, bearerClient(s, tr.Status.Token)); !apierrors.IsUnauthorized(err) {
		t.Errorf("SelfSubjectReview after the pod was deleted: %v, want 401", err)
	}
}

func TestLegacyTokenSecretIsFilledAndAuthenticates(t *testing.T) {
	s, admin := startForTokens(t, ServiceAccountOptions{})
	ctx := context.Background()
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "old"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{Type: corev1.SecretTypeServiceAccountToken,
		ObjectMeta: metav1.ObjectMeta{Name: "old-token", Annotations: map[string]string{corev1.ServiceAccountNameKey: "old"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := waitForToken(t, admin, "old-token")
	if string(secret.Data["namespace"]) != "default" || string(secret.Data["ca.crt"]) != string(s.CAPEM) {
		t.Errorf("secret data namespace %q, ca.crt %d bytes; want default and the server's CA", secret.Data["namespace"], len(secret.Data["ca.crt"]))
	}
	token := string(secret.Data["token"])
	if user, err := whoami(t, bearerClient(s, token)); err != nil || user.Username != "system:serviceaccount:default:old" {
		t.Fatalf("SelfSubjectReview with the legacy token = %+v, %v", user, err)
	}
	used, err := admin.CoreV1().Secrets("default").Get(ctx, "old-token", metav1.GetOptions{})
	if today := time.Now().UTC().Format(time.DateOnly); err != nil || used.Labels[serviceaccount.LegacyTokenLastUsedLabel] != today {
		t.Errorf("after use, the secret's labels are %v (%v), want %s=%s", used.Labels, err, serviceaccount.LegacyTokenLastUsedLabel, today)
	}
	if err := admin.CoreV1().Secrets("default").Delete(ctx, "old-token", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := whoami(t, bearerClient(s, token)); !apierrors.IsUnauthorized(err) {
		t.Errorf("SelfSubjectReview after the secret was deleted: %v, want 401", err)
	}
	// A token Secret of a service account that is gone is deleted.
	if _, err := admin.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{Type: corev1.SecretTypeServiceAccountToken,
		ObjectMeta: metav1.ObjectMeta{Name: "orphan", Annotations: map[string]string{corev1.ServiceAccountNameKey: "old"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForToken(t, admin, "orphan")
	if err := admin.CoreV1().ServiceAccounts("default").Delete(ctx, "old", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, err := admin.CoreV1().Secrets("default").Get(ctx, "orphan", metav1.GetOptions{}); !apierrors.IsNotFound(err); _, err = admin.CoreV1().Secrets("default").Get(ctx, "orphan", metav1.GetOptions{}) {
		if time.Now().After(deadline) {
			t.Fatalf("the token Secret of a deleted service account is still there (%v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitForToken(t *testing.T, cs kubernetes.Interface, name string) *corev1.Secret {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		secret, err := cs.CoreV1().Secrets("default").Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && len(secret.Data["token"]) > 0 {
			return secret
		}
		if time.Now().After(deadline) {
			t.Fatalf("secret %s never got a token (last: %v)", name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOpenIDDiscoveryNeedsAuthentication(t *testing.T) {
	s, admin := startForTokens(t, ServiceAccountOptions{Issuers: []string{"https://issuer.example", "https://old.example"}})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM)
	anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := anonymous.Get(s.URL + serviceaccount.OpenIDConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous GET %s = %d, want 401", serviceaccount.OpenIDConfigPath, resp.StatusCode)
	}
	raw, err := admin.CoreV1().RESTClient().Get().AbsPath(serviceaccount.OpenIDConfigPath).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["issuer"] != "https://issuer.example" || doc["jwks_uri"] != s.URL+serviceaccount.JWKSPath {
		t.Errorf("discovery document %s, want issuer https://issuer.example and jwks_uri %s", raw, s.URL+serviceaccount.JWKSPath)
	}
	checkOpenIDRoutes(t, admin.CoreV1().RESTClient())
}

// checkOpenIDRoutes: the documents are served with a slash at the end too,
// to GET only (anything else the generic 405 Status), and nothing below
// them, as kube-apiserver 1.37.2 answers (recorded).
func checkOpenIDRoutes(t *testing.T, c rest.Interface) {
	t.Helper()
	for _, r := range []struct {
		method, path string
		code         int
	}{
		{http.MethodGet, serviceaccount.OpenIDConfigPath + "/", 200},
		{http.MethodGet, serviceaccount.JWKSPath + "/", 200},
		{http.MethodPost, serviceaccount.OpenIDConfigPath, 405},
		{http.MethodPost, serviceaccount.JWKSPath, 405},
		{http.MethodHead, serviceaccount.JWKSPath, 405},
		{http.MethodGet, serviceaccount.JWKSPath + "/x", 404},
	} {
		res := c.Verb(r.method).AbsPath(r.path).Do(context.Background())
		var code int
		res.StatusCode(&code)
		raw, _ := res.Raw()
		if code != r.code {
			t.Errorf("%s %s = %d %s, want %d", r.method, r.path, code, raw, r.code)
		}
		if r.code == 405 && r.method != http.MethodHead && !apierrors.IsMethodNotSupported(res.Error()) {
			t.Errorf("%s %s = %s, want the 405 Status", r.method, r.path, raw)
		}
	}
}

func TestServiceAccountOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    ServiceAccountOptions
		err  string
	}{
		{name: "defaults"},
		{name: "two issuers", o: ServiceAccountOptions{Issuers: []string{"https://a", "kubernetes/serviceaccount"}}},
		{name: "empty issuer", o: ServiceAccountOptions{Issuers: []string{""}}, err: "service-account-issuer should not be an empty string"},
		{name: "repeated issuer", o: ServiceAccountOptions{Issuers: []string{"https://a", "https://a"}}, err: `service-account-issuer "https://a" is already specified`},
		{name: "bad URL", o: ServiceAccountOptions{Issuers: []string{"https://a b:x"}}, err: `service-account-issuer "https://a b:x" contained a ':' but was not a valid URL`},
		{name: "http jwks", o: ServiceAccountOptions{JWKSURI: "http://keys"}, err: "service-account-jwks-uri requires https scheme, parsed as: http://keys"},
		{name: "short max", o: ServiceAccountOptions{MaxTokenExpiration: time.Minute}, err: "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.validate()
			if (err == nil) != (tc.err == "") || (err != nil && !strings.HasPrefix(err.Error(), tc.err)) {
				t.Errorf("validate() = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestServiceAccountOptionsDefaults(t *testing.T) {
	o := ServiceAccountOptions{Issuers: []string{"https://a", "https://b"}}
	if got := o.audiences(); strings.Join(got, ",") != "https://a,https://b" {
		t.Errorf("audiences() = %v, want the issuers", got)
	}
	o.APIAudiences = []string{"api"}
	if got := o.audiences(); strings.Join(got, ",") != "api" {
		t.Errorf("audiences() = %v, want [api]", got)
	}
	if got := (ServiceAccountOptions{}).issuers(); len(got) != 1 || got[0] != serviceaccount.DefaultIssuer {
		t.Errorf("issuers() = %v, want [%s]", got, serviceaccount.DefaultIssuer)
	}
}

func TestKeyFilesRotationAndMaxExpiration(t *testing.T) {
	dir := t.TempDir()
	writeKey := func(name string) (string, *serviceaccount.Issuer) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
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
		iss, err := serviceaccount.NewIssuer(key, "https://old.example")
		if err != nil {
			t.Fatal(err)
		}
		return path, iss
	}
	signing, _ := writeKey("signing.key")
	retired, oldIssuer := writeKey("retired.key")
	s, admin := startForTokens(t, ServiceAccountOptions{Issuers: []string{"https://new.example", "https://old.example"},
		SigningKeyFile: signing, KeyFiles: []string{signing, retired}, APIAudiences: []string{"api"}, MaxTokenExpiration: 2 * time.Hour})
	ctx := context.Background()
	sa, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bot"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	day := int64(24 * 3600)
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "bot", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &day}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Until(tr.Status.ExpirationTimestamp.Time); got > 2*time.Hour || got < time.Hour {
		t.Errorf("token valid for %v, want the 2h maximum", got)
	}
	oldToken, err := oldIssuer.Issue(serviceaccount.NewClaims(sa, serviceaccount.Bound{}, time.Now(), 3600, 0, []string{"api"}))
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{"current": tr.Status.Token, "retired key, old issuer": oldToken} {
		if user, err := whoami(t, bearerClient(s, tok)); err != nil || user.Username != "system:serviceaccount:default:bot" {
			t.Errorf("%s token: user %+v, %v; want the service account", name, user, err)
		}
	}
	raw, err := admin.CoreV1().RESTClient().Get().AbsPath(serviceaccount.JWKSPath).DoRaw(ctx)
	if err != nil || strings.Count(string(raw), `"use":"sig"`) != 2 {
		t.Errorf("JWKS %s (%v), want both verification keys", raw, err)
	}
}
