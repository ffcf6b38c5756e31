// Package csrcleaner compares admitd's CSR cleaner
// (internal/controllers/csrcleaner) with upstream's
// pkg/controller/certificates/cleaner: which random CSRs each deletes.
// Upstream's decision is unexported: it is reached by go:linkname, so the
// comparison runs upstream's own compiled code.
package csrcleaner

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"testing"
	"time"
	_ "unsafe" // go:linkname

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/controller/certificates/cleaner"

	ours "github.com/admitd/admitd/internal/controllers/csrcleaner"
)

//go:linkname upstreamHandle k8s.io/kubernetes/pkg/controller/certificates/cleaner.(*CSRCleanerController).handle
func upstreamHandle(ccc *cleaner.CSRCleanerController, ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error

// ages are far enough from the cleaner's limits (1h, 24h) that the two
// reads of the clock cannot fall on either side of one.
var ages = []time.Duration{0, time.Minute, 50 * time.Minute, 70 * time.Minute, 23 * time.Hour, 25 * time.Hour, 100 * time.Hour}

func pick[T any](r *mrand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func certificateEnding(t *testing.T, notAfter time.Time) []byte {
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

func randomCSR(r *mrand.Rand, i int, certs [][]byte) *certificatesv1.CertificateSigningRequest {
	now := time.Now()
	at := func() metav1.Time {
		if r.IntN(8) == 0 {
			return metav1.Time{}
		}
		return metav1.NewTime(now.Add(-pick(r, ages)))
	}
	csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("csr-%d", i), CreationTimestamp: at()}}
	for range r.IntN(3) {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type:   pick(r, []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed}),
			Status: pick(r, []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse}), LastUpdateTime: at()})
	}
	csr.Status.Certificate = pick(r, certs)
	return csr
}

// 5,000 random CSRs (created, approved, denied and failed at every age
// around the limits or at no time; issued with live, expired, garbled or
// no certificates): each deleted by admitd's cleaner exactly when
// upstream's deletes it.
func TestCleanerMatchesUpstream(t *testing.T) {
	r := mrand.New(mrand.NewPCG(26, 4))
	certs := [][]byte{nil, certificateEnding(t, time.Now().Add(time.Hour)), certificateEnding(t, time.Now().Add(-time.Minute)), []byte("garbage")}
	mismatches := 0
	for i := range 5000 {
		csr := randomCSR(r, i, certs)
		client := fake.NewClientset(csr.DeepCopy())
		ccc := cleaner.NewCSRCleanerController(client.CertificatesV1().CertificateSigningRequests(),
			informers.NewSharedInformerFactory(client, 0).Certificates().V1().CertificateSigningRequests())
		client.ClearActions()
		if err := upstreamHandle(ccc, t.Context(), csr); err != nil {
			t.Fatal(err)
		}
		upstream := len(client.Actions()) > 0
		if why := ours.DoneWith(csr, time.Now()); (why != "") != upstream {
			mismatches++
			if mismatches <= 5 {
				t.Errorf("%s: ours %q, upstream deletes %t: %+v", csr.Name, why, upstream, csr.Status.Conditions)
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of 5000 differ", mismatches)
	}
}
