// Package webhooktest starts admission webhooks for tests: a certificate
// authority made for the test, and an HTTPS server on 127.0.0.1:0 with a
// certificate it issued, which gives back the URL and the caBundle that a
// webhook configuration needs to call it.
//
// It is for tests only: keys are short-lived and never written to disk, and
// the servers log no TLS errors (failed handshakes are the point of some
// tests).
package webhooktest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"sync/atomic"
	"time"
)

// validity is how long certificates are valid, from an hour ago (clock
// skew) on.
const validity = 24 * time.Hour

// CA is a certificate authority for tests.
type CA struct {
	// CertPEM is the CA's certificate: the caBundle that trusts the
	// certificates it issues.
	CertPEM []byte

	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	serial atomic.Int64
}

// NewCA returns a new CA whose certificate has the common name name.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &CA{CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert: cert, key: key}
	ca.serial.Store(1)
	return ca, nil
}

// Pool returns a pool that trusts the CA, for a client's RootCAs.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// IssuePEM issues a serving certificate for hosts (DNS names or IP
// addresses) and returns it and its key in PEM, as a server's tls.crt and
// tls.key files hold them. Every certificate has a new serial number.
func (ca *CA) IssuePEM(hosts ...string) (certPEM, keyPEM []byte, err error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: first(hosts)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.issue(tmpl)
}

// IssueClientPEM issues a client certificate with the common name name
// (for a server that requires and verifies client certificates issued by
// the CA) and returns it and its key in PEM.
func (ca *CA) IssueClientPEM(name string) (certPEM, keyPEM []byte, err error) {
	return ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// issue signs tmpl (subject, names and extended key usage set) with a new
// key, a new serial number and the CA's validity.
func (ca *CA) issue(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.SerialNumber = big.NewInt(ca.serial.Add(1))
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(validity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// Issue is IssuePEM for a tls.Config: the chain holds the certificate and
// the CA's.
func (ca *CA) Issue(hosts ...string) (tls.Certificate, error) {
	certPEM, keyPEM, err := ca.IssuePEM(hosts...)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(append(certPEM, ca.CertPEM...), keyPEM)
}

func first(hosts []string) string {
	if len(hosts) == 0 {
		return "webhooktest"
	}
	return hosts[0]
}
