package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Files of a serving bundle, relative to its directory.
const (
	CACertFile      = "ca.crt"
	CAKeyFile       = "ca.key"
	ServingCertFile = "serving.crt"
	ServingKeyFile  = "serving.key"
	AdminCertFile   = "admin.crt"
	AdminKeyFile    = "admin.key"
)

// The identity of the admin client certificate. Group system:masters is
// what the RBAC authorizer grants everything to.
const (
	AdminUser  = "admitd-admin"
	AdminGroup = "system:masters"
	caName     = "admitd-ca"
)

// renewBefore is how long before expiry EnsureServingBundle re-issues a leaf.
const renewBefore = 30 * 24 * time.Hour

// Bundle is what `admitd serve` needs to listen on HTTPS and to hand out an
// admin kubeconfig. All PEM fields hold the bytes that are on disk.
type Bundle struct {
	Dir            string
	CA             *CA
	ServingCertPEM []byte
	ServingKeyPEM  []byte
	AdminCertPEM   []byte
	AdminKeyPEM    []byte
	// Written lists the files the call that returned the bundle wrote,
	// relative to Dir; it is empty when every file was reused.
	Written []string
}

// ServingCertificate returns the serving certificate and key for tls.Config.
func (b Bundle) ServingCertificate() (tls.Certificate, error) {
	return tls.X509KeyPair(b.ServingCertPEM, b.ServingKeyPEM)
}

// EnsureServingBundle returns the bundle kept in dir, creating it first if
// any of its six files is missing: a new CA, a serving certificate for
// hosts and an admin client certificate (CN admitd-admin, O system:masters).
//
// An existing bundle is reused as it is, except that a leaf certificate not
// signed by the CA on disk, expiring within 30 days, or (for the serving
// certificate) not valid for every one of hosts is re-issued from that CA, so
// kubeconfigs that trust the CA keep working. Keys are written with mode
// 0600, certificates 0644, each through a temporary file and a rename.
func EnsureServingBundle(dir string, hosts []string) (Bundle, error) {
	if len(hosts) == 0 {
		return Bundle{}, errors.New("a serving bundle needs at least one host")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Bundle{}, err
	}
	complete, err := bundleComplete(dir)
	if err != nil {
		return Bundle{}, err
	}
	if !complete {
		return createBundle(dir, hosts)
	}
	b, err := loadBundle(dir)
	if err != nil {
		return Bundle{}, err
	}
	if err := b.renew(hosts); err != nil {
		return Bundle{}, err
	}
	return b, nil
}

func bundleComplete(dir string) (bool, error) {
	for _, name := range []string{CACertFile, CAKeyFile, ServingCertFile, ServingKeyFile, AdminCertFile, AdminKeyFile} {
		_, err := os.Stat(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return true, nil
}

func createBundle(dir string, hosts []string) (Bundle, error) {
	ca, err := NewCA(caName)
	if err != nil {
		return Bundle{}, err
	}
	caKey, err := ca.KeyPEM()
	if err != nil {
		return Bundle{}, err
	}
	b := Bundle{Dir: dir, CA: ca}
	if err := b.write(CACertFile, ca.CertPEM); err != nil {
		return Bundle{}, err
	}
	if err := b.write(CAKeyFile, caKey); err != nil {
		return Bundle{}, err
	}
	if err := b.issueServing(hosts); err != nil {
		return Bundle{}, err
	}
	if err := b.issueAdmin(); err != nil {
		return Bundle{}, err
	}
	return b, nil
}

func loadBundle(dir string) (Bundle, error) {
	ca, err := LoadCA(filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile))
	if err != nil {
		return Bundle{}, err
	}
	b := Bundle{Dir: dir, CA: ca}
	for _, f := range []struct {
		name string
		into *[]byte
	}{
		{ServingCertFile, &b.ServingCertPEM},
		{ServingKeyFile, &b.ServingKeyPEM},
		{AdminCertFile, &b.AdminCertPEM},
		{AdminKeyFile, &b.AdminKeyPEM},
	} {
		if *f.into, err = os.ReadFile(filepath.Join(dir, f.name)); err != nil {
			return Bundle{}, err
		}
	}
	return b, nil
}

// renew re-issues the leaves that can no longer be used as they are.
func (b *Bundle) renew(hosts []string) error {
	serving, err := b.leaf(ServingCertFile, b.ServingCertPEM, b.ServingKeyPEM)
	if err != nil {
		return err
	}
	if !b.usable(serving) || !coversHosts(serving, hosts) {
		if err := b.issueServing(hosts); err != nil {
			return err
		}
	}
	admin, err := b.leaf(AdminCertFile, b.AdminCertPEM, b.AdminKeyPEM)
	if err != nil {
		return err
	}
	if !b.usable(admin) {
		return b.issueAdmin()
	}
	return nil
}

// leaf parses a certificate and checks that key belongs to it. A damaged
// pair is an error rather than a reason to overwrite it.
func (b *Bundle) leaf(name string, certPEM, keyPEM []byte) (*x509.Certificate, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(b.Dir, name), err)
	}
	if pair.Leaf != nil {
		return pair.Leaf, nil
	}
	return x509.ParseCertificate(pair.Certificate[0])
}

func (b *Bundle) usable(leaf *x509.Certificate) bool {
	return leaf.CheckSignatureFrom(b.CA.Cert) == nil && time.Until(leaf.NotAfter) > renewBefore
}

func coversHosts(cert *x509.Certificate, hosts []string) bool {
	for _, h := range hosts {
		if cert.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func (b *Bundle) issueServing(hosts []string) error {
	certPEM, keyPEM, err := b.CA.IssueServing(hosts)
	if err != nil {
		return err
	}
	b.ServingCertPEM, b.ServingKeyPEM = certPEM, keyPEM
	if err := b.write(ServingKeyFile, keyPEM); err != nil {
		return err
	}
	return b.write(ServingCertFile, certPEM)
}

func (b *Bundle) issueAdmin() error {
	certPEM, keyPEM, err := b.CA.IssueClient(AdminUser, []string{AdminGroup})
	if err != nil {
		return err
	}
	b.AdminCertPEM, b.AdminKeyPEM = certPEM, keyPEM
	if err := b.write(AdminKeyFile, keyPEM); err != nil {
		return err
	}
	return b.write(AdminCertFile, certPEM)
}

// write stores one bundle file: keys private to the owner, certificates
// readable by all.
func (b *Bundle) write(name string, data []byte) error {
	if err := writeInDir(b.Dir, name, data); err != nil {
		return err
	}
	b.Written = append(b.Written, name)
	return nil
}

// writeInDir writes one file of this package's layouts: keys (*.key)
// private to the owner, everything else readable by all.
func writeInDir(dir, name string, data []byte) error {
	perm := os.FileMode(0o644)
	if strings.HasSuffix(name, ".key") {
		perm = 0o600
	}
	if err := writeFileAtomic(filepath.Join(dir, name), data, perm); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}
