// Package csrsigning compares admitd's CSR signer
// (internal/controllers/csrsigning) with upstream's
// pkg/controller/certificates/signer: upstream's four signing controllers
// run over a fake clientset and sign (or fail) random approved requests;
// admitd's validation, duration and certificate template must give the
// same outcome for each.
package csrsigning

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/controller/certificates/signer"

	ours "github.com/admitd/admitd/internal/controllers/csrsigning"
	"github.com/admitd/admitd/internal/pki"
)

const cases = 250

var (
	keys = []func() (crypto.Signer, error){
		func() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) },
		func() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P384(), rand.Reader) },
		func() (crypto.Signer, error) { _, k, err := ed25519.GenerateKey(rand.Reader); return k, err },
	}
	usagePool = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth,
		certificatesv1.UsageServerAuth, certificatesv1.UsageSigning, certificatesv1.UsageCodeSigning, certificatesv1.UsageAny, certificatesv1.UsageCertSign,
		certificatesv1.UsageEmailProtection, certificatesv1.UsageSMIME, certificatesv1.UsageOCSPSigning, certificatesv1.UsageKeyAgreement}
	expirations = []int32{0, 60, 599, 600, 601, 3600, 8 * 3600, 86400, 100_000_000}
)

func pick[T any](r *mrand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

type request struct {
	csr *certificatesv1.CertificateSigningRequest
	x   *x509.CertificateRequest
}

func randomRequest(t *testing.T, r *mrand.Rand, i int) request {
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: pick(r, []string{"alice", "system:node:n1", "n1", ""})}}
	tmpl.Subject.Organization = pick(r, [][]string{nil, {"system:nodes"}, {"system:nodes", "dev"}, {"dev"}})
	if r.IntN(2) == 0 {
		tmpl.DNSNames = []string{"n1.example"}
	}
	if r.IntN(3) == 0 {
		tmpl.IPAddresses = []net.IP{net.ParseIP("10.0.0.7")}
	}
	if r.IntN(6) == 0 {
		tmpl.EmailAddresses = []string{"a@example.com"}
	}
	if r.IntN(6) == 0 {
		tmpl.URIs = []*url.URL{{Scheme: "spiffe", Host: "example.org", Path: "/a"}}
	}
	key, err := pick(r, keys)()
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := x509.ParseCertificateRequest(der)
	var usages []certificatesv1.KeyUsage
	for _, j := range r.Perm(len(usagePool))[:1+r.IntN(4)] {
		usages = append(usages, usagePool[j])
	}
	csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("csr-%d", i)},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: pick(r, ours.Signers), Usages: usages,
			Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})},
		Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{
			{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test"}}}}
	if e := pick(r, expirations); e > 0 {
		csr.Spec.ExpirationSeconds = &e
	}
	return request{csr: csr, x: x}
}

// newCA is a CA valid for validity, and its files in dir.
func newCA(t *testing.T, dir string, validity time.Duration) (*pki.CA, string, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "signer"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(validity), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &pki.CA{Cert: cert, Key: key}, certFile, keyFile
}

// outcome is what a signer made of a request, in a line: the failure, or
// what the certificate says (validity as a duration, capped ones as
// "until the signer's end").
func outcome(t *testing.T, ca *pki.CA, certPEM []byte, failure *certificatesv1.CertificateSigningRequestCondition) string {
	if failure != nil {
		return fmt.Sprintf("failed %s %s %s: %s", failure.Type, failure.Status, failure.Reason, failure.Message)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return fmt.Sprintf("certificate not PEM: %q", certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	validity := cert.NotAfter.Sub(cert.NotBefore).String()
	if cert.NotAfter.Equal(ca.Cert.NotAfter) {
		validity = "until the signer's end"
	}
	var exts []string
	for _, e := range cert.Extensions {
		exts = append(exts, fmt.Sprintf("%s/%t", e.Id, e.Critical))
	}
	_, verifyErr := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	return fmt.Sprintf("signed subject=%q dns=%v ips=%v emails=%v uris=%v keyUsage=%d ext=%v ca=%t basic=%t validity=%s extensions=%v version=%d verifies=%t",
		cert.Subject.String(), cert.DNSNames, cert.IPAddresses, cert.EmailAddresses, cert.URIs, cert.KeyUsage, cert.ExtKeyUsage,
		cert.IsCA, cert.BasicConstraintsValid, validity, exts, cert.Version, verifyErr == nil)
}

// upstreamOutcomes runs upstream's four signers over the requests until
// each is signed or failed.
func upstreamOutcomes(t *testing.T, ca *pki.CA, certFile, keyFile string, ttl time.Duration, reqs []request) map[string]string {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var objs []runtime.Object
	for _, q := range reqs {
		objs = append(objs, q.csr.DeepCopy())
	}
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	csrs := factory.Certificates().V1().CertificateSigningRequests()
	for _, ctor := range []func(context.Context, *fake.Clientset) (*signer.CSRSigningController, error){
		func(ctx context.Context, c *fake.Clientset) (*signer.CSRSigningController, error) {
			return signer.NewKubeletServingCSRSigningController(ctx, c, csrs, certFile, keyFile, ttl)
		},
		func(ctx context.Context, c *fake.Clientset) (*signer.CSRSigningController, error) {
			return signer.NewKubeletClientCSRSigningController(ctx, c, csrs, certFile, keyFile, ttl)
		},
		func(ctx context.Context, c *fake.Clientset) (*signer.CSRSigningController, error) {
			return signer.NewKubeAPIServerClientCSRSigningController(ctx, c, csrs, certFile, keyFile, ttl)
		},
		func(ctx context.Context, c *fake.Clientset) (*signer.CSRSigningController, error) {
			return signer.NewLegacyUnknownCSRSigningController(ctx, c, csrs, certFile, keyFile, ttl)
		},
	} {
		s, err := ctor(ctx, client)
		if err != nil {
			t.Fatal(err)
		}
		go s.Run(ctx, 2)
	}
	factory.Start(ctx.Done())
	// The informers and the controllers' workers end with the context:
	// cancel it before waiting for them.
	defer func() {
		cancel()
		factory.Shutdown()
	}()
	out := map[string]string{}
	for deadline := time.Now().Add(60 * time.Second); len(out) < len(reqs) && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		list, err := client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range list.Items {
			if failure := failedCondition(&c); failure != nil || len(c.Status.Certificate) > 0 {
				out[c.Name] = outcome(t, ca, c.Status.Certificate, failure)
			}
		}
	}
	if len(out) < len(reqs) {
		t.Fatalf("upstream's signers finished %d of %d requests", len(out), len(reqs))
	}
	return out
}

func failedCondition(c *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequestCondition {
	for i := range c.Status.Conditions {
		if c.Status.Conditions[i].Type == certificatesv1.CertificateFailed {
			return &c.Status.Conditions[i]
		}
	}
	return nil
}

// ourOutcome is what admitd's signer makes of the request.
func ourOutcome(t *testing.T, ca *pki.CA, ttl time.Duration, q request) string {
	if err := ours.Validate(q.csr.Spec.SignerName, q.x, q.csr.Spec.Usages); err != nil {
		return outcome(t, ca, nil, &certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateFailed,
			Status: corev1.ConditionTrue, Reason: ours.ReasonSignerValidationFailure, Message: err.Error()})
	}
	der, err := ours.Certificate(ca, q.x, q.csr.Spec.Usages, ours.Duration(ttl, q.csr.Spec.ExpirationSeconds), time.Now())
	if err != nil {
		return "error: " + err.Error()
	}
	return outcome(t, ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil)
}

// 250 random approved requests (every kubernetes.io signer; subjects,
// organizations, DNS, IP, email and URI names; ECDSA and Ed25519 keys;
// one to four of twelve usages; no, short, long and too long
// expirations) under three setups (a ten-year CA with the default one-year
// duration and with one hour, a CA ending in two hours): each request
// signed or failed as upstream's signing controllers do it — same failure
// message, or a certificate with the same subject, names, key usages,
// extensions, CA flags and validity.
func TestSigningMatchesUpstream(t *testing.T) {
	r := mrand.New(mrand.NewPCG(26, 3))
	var reqs []request
	for i := range cases {
		reqs = append(reqs, randomRequest(t, r, i))
	}
	for _, setup := range []struct {
		name       string
		caValidity time.Duration
		ttl        time.Duration
	}{
		{"ten-year CA, one-year duration", 10 * 8760 * time.Hour, 8760 * time.Hour},
		{"ten-year CA, one-hour duration", 10 * 8760 * time.Hour, time.Hour},
		{"CA ending in two hours", 2 * time.Hour, 8760 * time.Hour},
	} {
		ca, certFile, keyFile := newCA(t, t.TempDir(), setup.caValidity)
		want := upstreamOutcomes(t, ca, certFile, keyFile, setup.ttl, reqs)
		mismatches := 0
		for _, q := range reqs {
			if got := ourOutcome(t, ca, setup.ttl, q); got != want[q.csr.Name] {
				mismatches++
				if mismatches <= 5 {
					t.Errorf("%s: %s (%s, %v, exp %v):\nours     %s\nupstream %s", setup.name, q.csr.Name, q.csr.Spec.SignerName, q.csr.Spec.Usages,
						q.csr.Spec.ExpirationSeconds, got, want[q.csr.Name])
				}
			}
		}
		if mismatches > 0 {
			t.Errorf("%s: %d of %d requests differ", setup.name, mismatches, len(reqs))
		}
		signed := 0
		for _, o := range want {
			if strings.HasPrefix(o, "signed") {
				signed++
			}
		}
		t.Logf("%s: %d signed, %d failed", setup.name, signed, len(want)-signed)
	}
}
