package registry

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// csrPEM is a signed PKCS#10 request for subject.
func csrPEM(t *testing.T, subject pkix.Name) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// A new CertificateSigningRequest is refused as upstream's v1 create
// validation refuses it; above all the legacy signer, which signs anything
// (a system:masters client certificate among others), cannot be asked for.
func TestCSRCreateValidation(t *testing.T) {
	res, ok := NewCatalogue().Lookup(schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"})
	if !ok {
		t.Fatal("no certificatesigningrequests")
	}
	good := csrPEM(t, pkix.Name{CommonName: "alice"})
	masters := csrPEM(t, pkix.Name{CommonName: "mallory", Organization: []string{"system:masters"}})
	broken := append([]byte(nil), good...)
	broken[len(broken)/2] ^= 0x01
	tests := []struct {
		name    string
		spec    certificatesv1.CertificateSigningRequestSpec
		wantErr string // "" is valid
	}{
		{"valid", certificatesv1.CertificateSigningRequestSpec{Request: good, SignerName: "kubernetes.io/kube-apiserver-client",
			Usages: []certificatesv1.KeyUsage{"client auth"}}, ""},
		{"legacy signer", certificatesv1.CertificateSigningRequestSpec{Request: masters, SignerName: "kubernetes.io/legacy-unknown",
			Usages: []certificatesv1.KeyUsage{"client auth"}}, `spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version`},
		{"not PEM", certificatesv1.CertificateSigningRequestSpec{Request: []byte("x"), SignerName: "example.com/s",
			Usages: []certificatesv1.KeyUsage{"client auth"}}, "PEM block type must be CERTIFICATE REQUEST"},
		{"altered request", certificatesv1.CertificateSigningRequestSpec{Request: broken, SignerName: "example.com/s",
			Usages: []certificatesv1.KeyUsage{"client auth"}}, "spec.request: Invalid value"},
		{"no usages", certificatesv1.CertificateSigningRequestSpec{Request: good, SignerName: "example.com/s"},
			"spec.usages: Required value"},
		{"unknown usage", certificatesv1.CertificateSigningRequestSpec{Request: good, SignerName: "example.com/s",
			Usages: []certificatesv1.KeyUsage{"client auth", "root"}}, `spec.usages[1]: Unsupported value: "root": supported values: "any", "cert sign"`},
		{"repeated usage", certificatesv1.CertificateSigningRequestSpec{Request: good, SignerName: "example.com/s",
			Usages: []certificatesv1.KeyUsage{"client auth", "client auth"}}, `spec.usages[1]: Duplicate value: "client auth"`},
		{"bad signer name", certificatesv1.CertificateSigningRequestSpec{Request: good, SignerName: "nodomain",
			Usages: []certificatesv1.KeyUsage{"client auth"}}, "spec.signerName: Invalid value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: tc.spec}
			errs := res.ValidateNew(csr)
			switch {
			case tc.wantErr == "" && len(errs) > 0:
				t.Errorf("refused: %v", errs)
			case tc.wantErr != "" && !strings.Contains(errs.ToAggregate().Error(), tc.wantErr):
				t.Errorf("errors = %v, want %q", errs, tc.wantErr)
			}
		})
	}
}
