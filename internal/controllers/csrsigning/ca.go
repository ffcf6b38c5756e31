package csrsigning

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"os"
	"sync"

	"github.com/admitd/admitd/internal/pki"
)

// CA is a signer's certificate authority as it is now.
type CA func() (*pki.CA, error)

// StaticCA is a CA that does not change.
func StaticCA(ca *pki.CA) CA { return func() (*pki.CA, error) { return ca, nil } }

// FileCA is the CA whose certificate (one) and key are in certFile and
// keyFile, read now (an error if they do not hold one) and again whenever
// their contents change, as kube-controller-manager reloads its signing
// files: contents that do not load are an error for the signings that
// find them.
func FileCA(certFile, keyFile string) (CA, error) {
	f := &fileCA{certFile: certFile, keyFile: keyFile}
	if _, err := f.current(); err != nil {
		return nil, err
	}
	return f.current, nil
}

type fileCA struct {
	certFile, keyFile string

	mu              sync.Mutex
	certPEM, keyPEM []byte
	ca              *pki.CA
}

func (f *fileCA) current() (*pki.CA, error) {
	certPEM, err := os.ReadFile(f.certFile)
	if err != nil {
		return nil, fmt.Errorf("error reading CA cert file %q: %v", f.certFile, err)
	}
	keyPEM, err := os.ReadFile(f.keyFile)
	if err != nil {
		return nil, fmt.Errorf("error reading CA key file %q: %v", f.keyFile, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ca != nil && bytes.Equal(certPEM, f.certPEM) && bytes.Equal(keyPEM, f.keyPEM) {
		return f.ca, nil
	}
	ca, err := parseCA(certPEM, keyPEM, f.certFile, f.keyFile)
	if err != nil {
		return nil, err
	}
	f.certPEM, f.keyPEM, f.ca = certPEM, keyPEM, ca
	return ca, nil
}

// parseCA is the CA of one PEM certificate and its PEM key.
func parseCA(certPEM, keyPEM []byte, certFile, keyFile string) (*pki.CA, error) {
	certs, err := pki.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("error reading CA cert file %q: %v", certFile, err)
	}
	if len(certs) != 1 {
		return nil, fmt.Errorf("error reading CA cert file %q: expected 1 certificate, found %d", certFile, len(certs))
	}
	key, err := pki.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("error reading CA key file %q: %v", keyFile, err)
	}
	// kube-controller-manager loads the pair with tls.X509KeyPair, which
	// refuses a key that is not the certificate's.
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, fmt.Errorf("error reading CA files %q and %q: %v", certFile, keyFile, err)
	}
	return &pki.CA{Cert: certs[0], Key: key, CertPEM: pki.EncodeCertPEM(certs[0])}, nil
}
