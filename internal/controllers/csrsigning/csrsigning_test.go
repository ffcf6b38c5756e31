package csrsigning

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/pki"
	"github.com/admitd/admitd/internal/registry"
)

func TestDuration(t *testing.T) {
	year := 8760 * time.Hour
	for _, tc := range []struct {
		longest time.Duration
		seconds *int32
		want    time.Duration
	}{
		{year, nil, year},
		{year, ptr.To[int32](3600), time.Hour},
		{year, ptr.To[int32](600), 10 * time.Minute},
		{year, ptr.To[int32](599), 10 * time.Minute},
		{year, ptr.To[int32](1), 10 * time.Minute},
		{time.Hour, ptr.To[int32](7200), time.Hour},
		{5 * time.Minute, ptr.To[int32](60), 10 * time.Minute}, // the floor is checked after the cap, as upstream
		{5 * time.Minute, ptr.To[int32](3600), 5 * time.Minute},
	} {
		if got := Duration(tc.longest, tc.seconds); got != tc.want {
			t.Errorf("Duration(%v, %v) = %v, want %v", tc.longest, ptr.Deref(tc.seconds, -1), got, tc.want)
		}
	}
}

// request is a PKCS#10 request (PEM) for a new key, and the request
// parsed.
func request(t *testing.T, tmpl *x509.CertificateRequest) ([]byte, *x509.CertificateRequest) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), req
}

func TestTemplate(t *testing.T) {
	now := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	_, req := request(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice", Organization: []string{"dev"}},
		DNSNames: []string{"a.example"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}})
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth, certificatesv1.UsageDigitalSignature,
		certificatesv1.UsageClientAuth, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	far := now.Add(10 * 8760 * time.Hour)
	for _, tc := range []struct {
		name            string
		ttl             time.Duration
		signerNotAfter  time.Time
		notBefore, want time.Time
		err             string
	}{
		{"short: not shortened", time.Hour, far, now.Add(-5 * time.Minute), now.Add(time.Hour), ""},
		{"8h and more: ends backdated", 8 * time.Hour, far, now.Add(-5 * time.Minute), now.Add(8*time.Hour - 5*time.Minute), ""},
		{"capped by the signer", 8760 * time.Hour, now.Add(time.Hour), now.Add(-5 * time.Minute), now.Add(time.Hour), ""},
		{"signer expired", time.Hour, now.Add(-time.Minute), time.Time{}, time.Time{}, "refusing to sign a certificate that expired in the past"},
		{"signer long expired", time.Hour, now.Add(-time.Hour), time.Time{}, time.Time{}, "the signer has expired"},
	} {
		tmpl, err := Template(req, usages, tc.ttl, now, tc.signerNotAfter)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%s: Template error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !tmpl.NotBefore.Equal(tc.notBefore) || !tmpl.NotAfter.Equal(tc.want) {
			t.Errorf("%s: valid %v to %v, want %v to %v", tc.name, tmpl.NotBefore, tmpl.NotAfter, tc.notBefore, tc.want)
		}
		if tmpl.KeyUsage != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment ||
			!slices.Equal(tmpl.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}) ||
			tmpl.IsCA || !tmpl.BasicConstraintsValid || tmpl.Subject.CommonName != "alice" || tmpl.DNSNames[0] != "a.example" {
			t.Errorf("%s: template %+v", tc.name, tmpl)
		}
	}
	if _, err := Template(req, []certificatesv1.KeyUsage{"bogus"}, time.Hour, now, far); err == nil || err.Error() != `unrecognized usage values: ["bogus"]` {
		t.Errorf("Template with an unknown usage: %v", err)
	}
}

func TestValidate(t *testing.T) {
	nodes := pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}
	client := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	serving := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
	for _, tc := range []struct {
		signer string
		req    x509.CertificateRequest
		usages []certificatesv1.KeyUsage
		want   string
	}{
		{KubeAPIServerClient, x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, client, ""},
		{KubeAPIServerClient, x509.CertificateRequest{}, []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}, "missing required usage for client certificate: client auth"},
		{KubeAPIServerClient, x509.CertificateRequest{}, []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageServerAuth}, "invalid usage for client certificate: server auth"},
		{KubeAPIServerClientKubelet, x509.CertificateRequest{Subject: nodes}, client, ""},
		{KubeAPIServerClientKubelet, x509.CertificateRequest{Subject: nodes}, client[1:], "usages did not match [client auth digital signature key encipherment]"},
		{KubeAPIServerClientKubelet, x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1"}}, client, "subject organization is not system:nodes"},
		{KubeAPIServerClientKubelet, x509.CertificateRequest{Subject: nodes, DNSNames: []string{"x"}}, client, "DNS subjectAltNames are not allowed"},
		{KubeAPIServerClientKubelet, x509.CertificateRequest{Subject: pkix.Name{CommonName: "n1", Organization: []string{"system:nodes"}}}, client, "subject common name does not begin with system:node:"},
		{KubeletServing, x509.CertificateRequest{Subject: nodes, DNSNames: []string{"n1"}}, serving, ""},
		{KubeletServing, x509.CertificateRequest{Subject: nodes}, serving, "DNS or IP subjectAltName is required"},
		{KubeletServing, x509.CertificateRequest{Subject: nodes, DNSNames: []string{"n1"}}, client, "usages did not match [digital signature key encipherment server auth]"},
		{LegacyUnknown, x509.CertificateRequest{}, nil, ""},
	} {
		err := Validate(tc.signer, &tc.req, tc.usages)
		if got := errString(err); got != tc.want {
			t.Errorf("Validate(%s, %v, %v) = %q, want %q", tc.signer, tc.req.Subject, tc.usages, got, tc.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func newCA(t *testing.T) *pki.CA {
	t.Helper()
	ca, err := pki.NewCA("test-signer")
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func csr(name, signer string, request []byte, usages []certificatesv1.KeyUsage, conds ...certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
	c := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer, Request: request, Usages: usages, ExpirationSeconds: ptr.To[int32](3600)}}
	for _, t := range conds {
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue})
	}
	return c
}

// handle signs an approved request of a signer it has a CA for (the
// certificate chains to the CA, names the subject, lasts the requested
// hour), fails one its signer refuses, and leaves the others alone.
func TestHandle(t *testing.T) {
	ca := newCA(t)
	client := fake.NewClientset()
	c, err := New(Config{Catalogue: registry.NewCatalogue(), Client: client, CAs: map[string]CA{KubeAPIServerClient: StaticCA(ca)}})
	if err != nil {
		t.Fatal(err)
	}
	alice, _ := request(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice", Organization: []string{"dev"}}})
	clientUsages := []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}
	approved, denied, failed := certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed
	for _, tc := range []struct {
		csr     *certificatesv1.CertificateSigningRequest
		signed  bool
		failure string
	}{
		{csr("signed", KubeAPIServerClient, alice, clientUsages, approved), true, ""},
		{csr("refused", KubeAPIServerClient, alice, []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth}, approved), false, "invalid usage for client certificate: server auth"},
		{csr("pending", KubeAPIServerClient, alice, clientUsages), false, ""},
		{csr("denied", KubeAPIServerClient, alice, clientUsages, approved, denied), false, ""},
		{csr("failed", KubeAPIServerClient, alice, clientUsages, approved, failed), false, ""},
		{csr("other-signer", KubeletServing, alice, clientUsages, approved), false, ""},
	} {
		if err := client.Tracker().Add(tc.csr); err != nil {
			t.Fatal(err)
		}
		client.ClearActions()
		before := tc.csr.DeepCopy()
		if err := c.handle(t.Context(), tc.csr); err != nil {
			t.Fatalf("%s: %v", tc.csr.Name, err)
		}
		if !reflect.DeepEqual(before, tc.csr) {
			t.Errorf("%s: handle changed the cached object", tc.csr.Name)
		}
		var updated *certificatesv1.CertificateSigningRequest
		for _, a := range client.Actions() {
			if u, ok := a.(clienttesting.UpdateAction); ok && a.GetSubresource() == "status" {
				updated = u.GetObject().(*certificatesv1.CertificateSigningRequest)
			}
		}
		wantWrite := tc.signed || tc.failure != ""
		if (updated != nil) != wantWrite {
			t.Errorf("%s: status updated %t, want %t", tc.csr.Name, updated != nil, wantWrite)
			continue
		}
		if tc.signed {
			checkIssued(t, ca, updated.Status.Certificate)
		}
		if tc.failure != "" {
			last := updated.Status.Conditions[len(updated.Status.Conditions)-1]
			if last.Type != failed || last.Status != corev1.ConditionTrue || last.Reason != "SignerValidationFailure" || last.Message != tc.failure || len(updated.Status.Certificate) > 0 {
				t.Errorf("%s: condition %+v, want Failed/SignerValidationFailure %q", tc.csr.Name, last, tc.failure)
			}
		}
	}
}

func checkIssued(t *testing.T, ca *pki.CA, certPEM []byte) {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("status.certificate %q is not a PEM certificate", certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the certificate does not verify with the CA: %v", err)
	}
	if cert.Subject.CommonName != "alice" || !slices.Equal(cert.Subject.Organization, []string{"dev"}) {
		t.Errorf("subject %v, want CN=alice O=dev", cert.Subject)
	}
	if d := cert.NotAfter.Sub(cert.NotBefore); d != time.Hour+5*time.Minute {
		t.Errorf("valid for %v, want 1h5m (an hour, backdated 5 minutes)", d)
	}
}
