package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkX509Authenticate authenticates a request by a client
// certificate already verified once (the cached path every request of a
// client takes).
func BenchmarkX509Authenticate(b *testing.B) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	root := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "root"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true}
	rootDER, err := x509.CreateCertificate(rand.Reader, root, root, key.Public(), key)
	if err != nil {
		b.Fatal(err)
	}
	rootCert, _ := x509.ParseCertificate(rootDER)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "alice", Organization: []string{"dev"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, rootCert, key.Public(), key)
	if err != nil {
		b.Fatal(err)
	}
	leafCert, _ := x509.ParseCertificate(leafDER)
	pool := x509.NewCertPool()
	pool.AddCert(rootCert)
	a := benchX509(pool)
	r := httptest.NewRequest("GET", "/api", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leafCert}}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := a.Authenticate(r); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
