package registry

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

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
			case tc.wantErr != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.wantErr)):
				t.Errorf("errors = %v, want %q", errs, tc.wantErr)
			}
		})
	}
}

// Any name will do for a CertificateSigningRequest, but the path-segment
// rule every name meets is checked only when nothing else failed, as
// upstream's create does.
func TestCSRNameCheckedLast(t *testing.T) {
	res, ok := NewCatalogue().Lookup(schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"})
	if !ok {
		t.Fatal("no certificatesigningrequests")
	}
	spec := certificatesv1.CertificateSigningRequestSpec{Request: csrPEM(t, pkix.Name{CommonName: "alice"}), SignerName: "example.com/s",
		Usages: []certificatesv1.KeyUsage{"client auth"}}
	noUsages := spec
	noUsages.Usages = nil
	for _, tc := range []struct {
		name    string
		spec    certificatesv1.CertificateSigningRequestSpec
		labels  map[string]string
		wantErr string
	}{
		{"Any:Name_at.all", spec, nil, ""},
		{"a/b", spec, nil, `metadata.name: Invalid value: "a/b": may not contain '/'`},
		{"a/b", noUsages, nil, "spec.usages: Required value"},
		{"a/b", spec, map[string]string{"bad key!": "x"}, "metadata.labels: Invalid value: \"bad key!\""},
	} {
		csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Labels: tc.labels}, Spec: tc.spec}
		errs := res.ValidateNew(csr)
		switch {
		case tc.wantErr == "" && len(errs) > 0:
			t.Errorf("%s: refused: %v", tc.name, errs)
		case tc.wantErr != "" && (len(errs) != 1 || !strings.HasPrefix(errs.ToAggregate().Error(), tc.wantErr)):
			t.Errorf("%s: errors = %v, want only %q", tc.name, errs, tc.wantErr)
		}
	}
}

// An update of a CertificateSigningRequest is refused as upstream's three
// update validations refuse it: only /approval adds or changes the
// Approved and Denied conditions, only /status sets the certificate (and
// only once, a PEM certificate), and no write removes a verdict.
func TestCSRUpdateValidation(t *testing.T) {
	res, ok := NewCatalogue().Lookup(schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"})
	if !ok {
		t.Fatal("no certificatesigningrequests")
	}
	stored := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: csrPEM(t, pkix.Name{CommonName: "alice"}),
			SignerName: "kubernetes.io/kube-apiserver-client", Usages: []certificatesv1.KeyUsage{"client auth"}}}
	then := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	approved := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: "True", Reason: "R",
		LastUpdateTime: then, LastTransitionTime: then}
	denied := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: "True", Reason: "R",
		LastUpdateTime: then, LastTransitionTime: then}
	withConditions := func(c *certificatesv1.CertificateSigningRequest, cs ...certificatesv1.CertificateSigningRequestCondition) *certificatesv1.CertificateSigningRequest {
		c = c.DeepCopy()
		c.Status.Conditions = cs
		return c
	}
	withCert := func(c *certificatesv1.CertificateSigningRequest, cert string) *certificatesv1.CertificateSigningRequest {
		c = c.DeepCopy()
		c.Status.Certificate = []byte(cert)
		return c
	}
	certPEM := selfSignedPEM(t)
	tests := []struct {
		name, subresource string
		old, obj          *certificatesv1.CertificateSigningRequest
		wantErr           string
	}{
		{"approve through approval", "approval", stored, withConditions(stored, approved), ""},
		{"approve through status", "status", stored, withConditions(stored, approved), `status.conditions: Forbidden: updates may not add a condition of type "Approved"`},
		{"approve and deny", "approval", stored, withConditions(stored, approved, denied),
			"status.conditions: Invalid value: \"{conditions[{\\\"type\\\": \\\"Approved\\\"}], conditions[{\\\"type\\\": \\\"Denied\\\"}]}\": must specify at most one of: `conditions[{\"type\": \"Approved\"}]`, `conditions[{\"type\": \"Denied\"}]`"},
		{"unstamped verdict through status", "status", withConditions(stored, certificatesv1.CertificateSigningRequestCondition{Type: "Approved", Status: "True"}),
			withConditions(stored, certificatesv1.CertificateSigningRequestCondition{Type: "Approved", Status: "True"}),
			`"Message": "",`}, // upstream's internal spelling: Go names, empty fields kept
		{"withdraw approval", "approval", withConditions(stored, approved), stored, `status.conditions: Forbidden: updates may not remove a condition of type "Approved"`},
		{"approved False", "approval", stored, withConditions(stored, certificatesv1.CertificateSigningRequestCondition{Type: "Approved", Status: "False"}),
			`status.conditions[0].status: Unsupported value: "False": supported values: "True"`},
		{"untyped condition", "status", stored, withConditions(stored, certificatesv1.CertificateSigningRequestCondition{Status: "True"}), "status.conditions[0].type: Required value"},
		{"issue through status", "status", withConditions(stored, approved), withCert(withConditions(stored, approved), certPEM), ""},
		{"change approval through status", "status", withConditions(stored, approved), withConditions(stored, denied),
			`status.conditions: Forbidden: updates may not add a condition of type "Denied"`},
		{"reissue", "status", withCert(stored, certPEM), withCert(stored, selfSignedPEM(t)), "status.certificate: Forbidden: updates may not modify existing certificate content"},
		{"not a certificate", "status", stored, withCert(stored, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
			`status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"`},
		{"garbage certificate", "status", stored, withCert(stored, "garbage"), "must contain at least one CERTIFICATE PEM block"},
		{"label on main", "", withConditions(stored, approved), func() *certificatesv1.CertificateSigningRequest {
			c := withConditions(stored, approved)
			c.Labels = map[string]string{"a": "b"}
			return c
		}(), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := PrepareForUpdate(res, tc.subresource, tc.obj.DeepCopy(), tc.old)
			errs := res.ValidateSubresourceChange(tc.subresource, obj, tc.old)
			switch {
			case tc.wantErr == "" && len(errs) > 0:
				t.Errorf("refused: %v", errs)
			case tc.wantErr != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.wantErr)):
				t.Errorf("errors = %v, want %q", errs, tc.wantErr)
			}
		})
	}
}

// selfSignedPEM is a PEM certificate.
func selfSignedPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
