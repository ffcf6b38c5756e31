package pki

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// PEM block types this package writes and reads.
const (
	certificateBlock = "CERTIFICATE"
	pkcs8KeyBlock    = "PRIVATE KEY"
	ecKeyBlock       = "EC PRIVATE KEY"
	rsaKeyBlock      = "RSA PRIVATE KEY"
)

func encodePEM(blockType string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
}

// EncodeCertPEM returns cert as a PEM "CERTIFICATE" block.
func EncodeCertPEM(cert *x509.Certificate) []byte {
	return encodePEM(certificateBlock, cert.Raw)
}

// EncodePrivateKeyPEM returns key as a PEM "PRIVATE KEY" (PKCS #8) block.
func EncodePrivateKeyPEM(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding private key: %w", err)
	}
	return encodePEM(pkcs8KeyBlock, der), nil
}

// ParseCertsPEM returns every certificate in data, in order. Blocks of other
// types are skipped; data without any certificate is an error.
func ParseCertsPEM(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != certificateBlock {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing certificate: %w", err)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return certs, nil
}

// ParsePrivateKeyPEM returns the first private key in data. It reads PKCS #8
// ("PRIVATE KEY"), SEC 1 ("EC PRIVATE KEY") and PKCS #1 ("RSA PRIVATE KEY")
// blocks, so a CA made by other tools (openssl, kubeadm) can be loaded.
func ParsePrivateKeyPEM(data []byte) (crypto.Signer, error) {
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, errors.New("no PEM private key found")
		}
		switch block.Type {
		case pkcs8KeyBlock:
			key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parsing private key: %w", err)
			}
			signer, ok := key.(crypto.Signer)
			if !ok {
				return nil, fmt.Errorf("unsupported private key type %T", key)
			}
			return signer, nil
		case ecKeyBlock:
			key, err := x509.ParseECPrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parsing EC private key: %w", err)
			}
			return key, nil
		case rsaKeyBlock:
			key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parsing RSA private key: %w", err)
			}
			return key, nil
		}
	}
}

// LoadCA reads a CA certificate and its key from PEM files. The certificate
// must be a CA and the key must match it.
func LoadCA(certPath, keyPath string) (*CA, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, err
	}
	ca, err := parseCA(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("loading CA from %s and %s: %w", certPath, keyPath, err)
	}
	return ca, nil
}

func parseCA(certPEM, keyPEM []byte) (*CA, error) {
	certs, err := ParseCertsPEM(certPEM)
	if err != nil {
		return nil, err
	}
	cert := certs[0]
	if !cert.IsCA {
		return nil, fmt.Errorf("certificate %q is not a CA", cert.Subject.CommonName)
	}
	key, err := ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, err
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		return nil, errors.New("private key does not match the CA certificate")
	}
	return &CA{Cert: cert, Key: key, CertPEM: EncodeCertPEM(cert)}, nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so a reader never sees a half-written file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(perm); err != nil {
		_ = tmp.Close()
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err = tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
