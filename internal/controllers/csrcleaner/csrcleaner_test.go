package csrcleaner

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// certificateEnding is a PEM certificate that ends at notAfter.
func certificateEnding(t *testing.T, notAfter time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: notAfter.Add(-48 * time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestDoneWith(t *testing.T) {
	now := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	cond := func(typ certificatesv1.RequestConditionType, updated metav1.Time) certificatesv1.CertificateSigningRequestCondition {
		return certificatesv1.CertificateSigningRequestCondition{Type: typ, Status: "True", LastUpdateTime: updated}
	}
	live, ended := certificateEnding(t, now.Add(time.Hour)), certificateEnding(t, now.Add(-time.Minute))
	for _, tc := range []struct {
		name    string
		created metav1.Time
		conds   []certificatesv1.CertificateSigningRequestCondition
		cert    []byte
		want    bool
	}{
		{"issued, approved 2h ago", ago(3 * time.Hour), []certificatesv1.CertificateSigningRequestCondition{cond("Approved", ago(2*time.Hour))}, live, true},
		{"issued, approved 30m ago", ago(3 * time.Hour), []certificatesv1.CertificateSigningRequestCondition{cond("Approved", ago(30*time.Minute))}, live, false},
		{"issued, approved at no time", ago(3 * time.Hour), []certificatesv1.CertificateSigningRequestCondition{cond("Approved", metav1.Time{})}, live, false},
		{"issued, expired, approved recently", ago(3 * time.Hour), []certificatesv1.CertificateSigningRequestCondition{cond("Approved", ago(time.Minute))}, ended, true},
		{"denied 2h ago", ago(3 * time.Hour), []certificatesv1.CertificateSigningRequestCondition{cond("Denied", ago(2*time.Hour))}, nil, true},
		{"denied 10m ago", ago(3 * time.Hour), []certificatesv1.CertificateSigningRequestCondition{cond("Denied", ago(10*time.Minute))}, nil, false},
		{"failed 2h ago", ago(3 * time.Hour), []certificatesv1.CertificateSigningRequestCondition{cond("Approved", ago(2*time.Hour)), cond("Failed", ago(2*time.Hour))}, nil, true},
		{"pending 25h", ago(25 * time.Hour), nil, nil, true},
		{"pending 23h", ago(23 * time.Hour), nil, nil, false},
		{"approved 25h ago, not issued", ago(26 * time.Hour), []certificatesv1.CertificateSigningRequestCondition{cond("Approved", ago(25*time.Hour))}, nil, true},
		{"approved 23h ago, not issued", ago(26 * time.Hour), []certificatesv1.CertificateSigningRequestCondition{cond("Approved", ago(23*time.Hour))}, nil, false},
	} {
		csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "c", CreationTimestamp: tc.created},
			Status: certificatesv1.CertificateSigningRequestStatus{Conditions: tc.conds, Certificate: tc.cert}}
		if got := DoneWith(csr, now); (got != "") != tc.want {
			t.Errorf("%s: DoneWith = %q, want deleted %t", tc.name, got, tc.want)
		}
	}
}
