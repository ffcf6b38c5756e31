package pki

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
)

// TestEnsureFrontProxy: the first call makes a CA and a client certificate
// CN front-proxy-client for client authentication; the next reuses both;
// a lost client certificate is re-issued by the same CA.
func TestEnsureFrontProxy(t *testing.T) {
	dir := t.TempDir()
	first, err := EnsureFrontProxy(dir)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := first.ClientCertificate()
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: first.CA.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil || leaf.Subject.CommonName != "front-proxy-client" {
		t.Fatalf("client certificate CN %q verifies with %v, want front-proxy-client verified by the front-proxy CA", leaf.Subject.CommonName, err)
	}
	again, err := EnsureFrontProxy(dir)
	if err != nil || !bytes.Equal(again.CA.CertPEM, first.CA.CertPEM) || !bytes.Equal(again.ClientCertPEM, first.ClientCertPEM) {
		t.Fatalf("second call: %v, want the same CA and client certificate", err)
	}
	if err := os.Remove(filepath.Join(dir, FrontProxyClientCertFile)); err != nil {
		t.Fatal(err)
	}
	renewed, err := EnsureFrontProxy(dir)
	if err != nil || !bytes.Equal(renewed.CA.CertPEM, first.CA.CertPEM) || bytes.Equal(renewed.ClientCertPEM, first.ClientCertPEM) {
		t.Fatalf("after losing the client certificate: %v, want a new one from the same CA", err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, FrontProxyCAKeyFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("CA key mode = %v, want 0600", fi.Mode().Perm())
	}
}
