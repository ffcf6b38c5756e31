package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/admitd/admitd/internal/pki"
)

// KeyFile is the signing key's file in the data directory's pki folder, as
// kubeadm's sa.key.
const KeyFile = "sa.key"

// LoadOrCreateKey reads the PEM signing key at path (RSA, or ECDSA P-256,
// P-384 or P-521, as kube-apiserver's --service-account-signing-key-file),
// or generates an ECDSA P-256 key there (mode 0600) when the file does not
// exist: ES256, and a first start that does not wait for an RSA key.
func LoadOrCreateKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		return pki.ParsePrivateKeyPEM(data)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading the service-account key: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the service-account key: %w", err)
	}
	pemData, err := pki.EncodePrivateKeyPEM(key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, pemData, 0o600); err != nil {
		return nil, fmt.Errorf("writing the service-account key: %w", err)
	}
	return key, nil
}

// NewEphemeralIssuer returns an issuer with a fresh in-memory ES256 key:
// for servers without a data directory (tests); its tokens do not survive
// a restart.
func NewEphemeralIssuer() *Issuer {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(fmt.Sprintf("generating a P-256 key: %v", err))
	}
	i, err := NewIssuer(key, DefaultIssuer)
	if err != nil {
		panic(err)
	}
	return i
}
