package csrsigning

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/admitd/admitd/internal/pki"
)

// writeCA writes the certificate of one CA and the key of another (the
// same one when they are equal) and returns the two paths.
func writeCA(t *testing.T, dir string, certOf, keyOf *pki.CA) (string, string) {
	t.Helper()
	keyPEM, err := keyOf.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	if err := os.WriteFile(certFile, certOf.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// FileCA loads a certificate with its own key, and refuses, as
// kube-controller-manager does, a key that is not the certificate's (it
// would sign certificates nobody can verify with the CA).
func TestFileCA(t *testing.T) {
	one, err := pki.NewCA("one")
	if err != nil {
		t.Fatal(err)
	}
	other, err := pki.NewCA("other")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := writeCA(t, dir, one, one)
	ca, err := FileCA(certFile, keyFile)
	if err != nil {
		t.Fatalf("a matching pair: %v", err)
	}
	if got, err := ca(); err != nil || got.Cert.Subject.CommonName != "one" {
		t.Fatalf("CA = %v, %v; want one", got, err)
	}
	writeCA(t, dir, one, other)
	if _, err := ca(); err == nil || !strings.Contains(err.Error(), "private key does not match public key") {
		t.Errorf("after the key changed to another CA's: %v, want the mismatch", err)
	}
	if _, err := FileCA(certFile, keyFile); err == nil || !strings.Contains(err.Error(), "private key does not match public key") {
		t.Errorf("FileCA of a mismatched pair: %v, want the mismatch", err)
	}
}
