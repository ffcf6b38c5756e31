// Package pki creates the local certificates admitd needs when nobody hands
// it any: a private certificate authority, a serving certificate for the
// HTTPS listener, and an admin client certificate (group system:masters)
// written into a kubeconfig. `admitd serve` uses it on first start and
// `admitd certs` exposes it on the command line.
//
// It is for development and single-host set-ups. It is not a general PKI: no
// revocation, no rotation beyond re-issuing an expired or mismatched leaf,
// and keys live unencrypted on disk (mode 0600).
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Validity periods of what this package issues.
const (
	CAValidity   = 10 * 365 * 24 * time.Hour
	LeafValidity = 365 * 24 * time.Hour
	// backdate absorbs small clock differences between the issuing host and
	// the hosts that verify the certificate.
	backdate = 5 * time.Minute
)

// CA is a certificate authority: its certificate and the key that signs.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// CertPEM is Cert, PEM encoded, as it is written to disk and embedded
	// in kubeconfigs.
	CertPEM []byte
}

// NewCA creates a self-signed CA with an ECDSA P-256 key, valid for ten years.
func NewCA(commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, CertPEM: EncodeCertPEM(cert)}, nil
}

// KeyPEM returns the CA key, PEM encoded (PKCS #8).
func (ca *CA) KeyPEM() ([]byte, error) {
	return EncodePrivateKeyPEM(ca.Key)
}

// Pool returns a pool holding only this CA, for verifying what it issued.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return pool
}

// IssueServing issues a server certificate for hosts, valid for one year.
// Each host that parses as an IP address becomes an IP SAN, every other one
// a DNS SAN; the first host is also the subject common name.
func (ca *CA) IssueServing(hosts []string) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New("a serving certificate needs at least one host")
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: hosts[0]},
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

// IssueClient issues a client certificate, valid for one year, whose
// subject is cn with organizations orgs: the API server's x509
// authenticator reads them as the user name and the groups.
func (ca *CA) IssueClient(cn string, orgs []string) (certPEM, keyPEM []byte, err error) {
	if cn == "" {
		return nil, nil, errors.New("a client certificate needs a common name")
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: orgs},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	return ca.issue(tmpl)
}

// issue completes tmpl as a leaf certificate, signs it with a fresh P-256 key
// and returns both, PEM encoded.
func (ca *CA) issue(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.SerialNumber = serial
	tmpl.NotBefore = now.Add(-backdate)
	tmpl.NotAfter = now.Add(LeafValidity)
	if tmpl.NotAfter.After(ca.Cert.NotAfter) {
		tmpl.NotAfter = ca.Cert.NotAfter
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	keyPEM, err = EncodePrivateKeyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return encodePEM(certificateBlock, der), keyPEM, nil
}

// newSerial returns a random, positive 128-bit serial number.
func newSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("generating serial number: %w", err)
	}
	return serial.Add(serial, big.NewInt(1)), nil
}
