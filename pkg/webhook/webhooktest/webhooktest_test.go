package webhooktest_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

func TestServerIsTrustedThroughItsCABundle(t *testing.T) {
	s := webhooktest.Start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.URL.Path)
	}))
	if !strings.HasPrefix(s.URL, "https://127.0.0.1:") {
		t.Fatalf("URL = %q, want https://127.0.0.1:<port>", s.URL)
	}
	cc := s.ClientConfig("/validate")
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cc.CABundle) {
		t.Fatal("ClientConfig().CABundle holds no PEM certificate")
	}
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := trusting.Get(*cc.URL)
	if err != nil {
		t.Fatalf("GET %s with the caBundle: %v", *cc.URL, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "/validate" {
		t.Errorf("GET %s = %q, want /validate", *cc.URL, body)
	}

	other, err := webhooktest.NewCA("other")
	if err != nil {
		t.Fatal(err)
	}
	untrusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: other.Pool()}}}
	if _, err := untrusting.Get(s.URL); err == nil {
		t.Error("GET with another CA's pool succeeded, want a certificate error")
	}
}

func TestIssuePEMHosts(t *testing.T) {
	ca, err := webhooktest.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssuePEM("webhook.default.svc", "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	for _, host := range []string{"webhook.default.svc", "10.0.0.1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: host}); err != nil {
			t.Errorf("certificate for %s: Verify = %v, want valid", host, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "other.example"}); err == nil {
		t.Error("certificate valid for other.example, want only the hosts asked for")
	}
}
