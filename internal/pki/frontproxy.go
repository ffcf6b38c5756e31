package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Files of the front-proxy pair, relative to the bundle directory (the
// names kubeadm gives them).
const (
	FrontProxyCACertFile     = "front-proxy-ca.crt"
	FrontProxyCAKeyFile      = "front-proxy-ca.key"
	FrontProxyClientCertFile = "front-proxy-client.crt"
	FrontProxyClientKeyFile  = "front-proxy-client.key"
)

// FrontProxyClientName is the common name of the generated proxy client
// certificate, the one name the generated request-header settings allow
// (kubeadm's).
const FrontProxyClientName = "front-proxy-client"

const frontProxyCAName = "admitd-front-proxy-ca"

// FrontProxy is the identity the aggregation layer presents to extension
// API servers: a CA of its own (never the client CA, whose every client
// certificate would then be trusted to assert any user in headers) and a
// client certificate it signed.
type FrontProxy struct {
	CA            *CA
	ClientCertPEM []byte
	ClientKeyPEM  []byte
}

// ClientCertificate returns the proxy client certificate for tls.Config.
func (f FrontProxy) ClientCertificate() (tls.Certificate, error) {
	return tls.X509KeyPair(f.ClientCertPEM, f.ClientKeyPEM)
}

// EnsureFrontProxy returns the front-proxy CA and client certificate kept
// in dir, creating the CA when either of its files is missing and
// re-issuing the client certificate when it is missing, not signed by that
// CA or expires within 30 days.
func EnsureFrontProxy(dir string) (FrontProxy, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return FrontProxy{}, err
	}
	ca, err := LoadCA(filepath.Join(dir, FrontProxyCACertFile), filepath.Join(dir, FrontProxyCAKeyFile))
	if errors.Is(err, fs.ErrNotExist) {
		ca, err = newFrontProxyCA(dir)
	}
	if err != nil {
		return FrontProxy{}, err
	}
	f := FrontProxy{CA: ca}
	certPEM, certErr := os.ReadFile(filepath.Join(dir, FrontProxyClientCertFile))
	keyPEM, keyErr := os.ReadFile(filepath.Join(dir, FrontProxyClientKeyFile))
	if certErr == nil && keyErr == nil && clientUsable(ca, certPEM, keyPEM) {
		f.ClientCertPEM, f.ClientKeyPEM = certPEM, keyPEM
		return f, nil
	}
	if f.ClientCertPEM, f.ClientKeyPEM, err = ca.IssueClient(FrontProxyClientName, nil); err != nil {
		return FrontProxy{}, err
	}
	if err := writeInDir(dir, FrontProxyClientKeyFile, f.ClientKeyPEM); err != nil {
		return FrontProxy{}, err
	}
	return f, writeInDir(dir, FrontProxyClientCertFile, f.ClientCertPEM)
}

func newFrontProxyCA(dir string) (*CA, error) {
	ca, err := NewCA(frontProxyCAName)
	if err != nil {
		return nil, err
	}
	key, err := ca.KeyPEM()
	if err != nil {
		return nil, err
	}
	if err := writeInDir(dir, FrontProxyCAKeyFile, key); err != nil {
		return nil, err
	}
	return ca, writeInDir(dir, FrontProxyCACertFile, ca.CertPEM)
}

// clientUsable reports whether the pair is intact, signed by ca and valid
// for more than 30 days.
func clientUsable(ca *CA, certPEM, keyPEM []byte) bool {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	return err == nil && leaf.CheckSignatureFrom(ca.Cert) == nil && time.Until(leaf.NotAfter) > renewBefore
}
