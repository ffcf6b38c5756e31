package pki

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Files of a webhook's serving certificate, named as the keys of a
// kubernetes.io/tls Secret. The CA beside them uses CACertFile and
// CAKeyFile.
const (
	TLSCertFile = "tls.crt"
	TLSKeyFile  = "tls.key"
)

// webhookCAName is the common name of a CA that WriteServingFiles creates.
const webhookCAName = "admitd-webhook-ca"

// ServingFiles is what WriteServingFiles left in its directory. PEM fields
// hold the bytes that are on disk.
type ServingFiles struct {
	Dir string
	CA  *CA
	// CertPEM and KeyPEM are tls.crt and tls.key.
	CertPEM, KeyPEM []byte
	// CAReused is true when the CA was read from Dir rather than created.
	CAReused bool
	// Written lists the files written, relative to Dir, in order.
	Written []string
}

// WriteServingFiles writes a serving certificate for hosts into dir, as
// tls.crt and tls.key, signed by the CA kept there as ca.crt and ca.key.
// When neither CA file exists, a new CA is created and written first; when
// only one of them does, or they do not belong together, it is an error
// rather than a reason to replace a CA that others may already trust. A new
// leaf is issued at every call. Keys are written with mode 0600,
// certificates 0644, each through a temporary file and a rename.
//
// Hosts are DNS names (a leading "*." is allowed) or IP addresses; see
// ValidateHosts.
func WriteServingFiles(dir string, hosts []string) (ServingFiles, error) {
	if err := ValidateHosts(hosts); err != nil {
		return ServingFiles{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ServingFiles{}, err
	}
	f := ServingFiles{Dir: dir}
	ca, err := loadOrCreateCA(dir, &f.Written)
	if err != nil {
		return ServingFiles{}, err
	}
	f.CA, f.CAReused = ca, len(f.Written) == 0
	if f.CertPEM, f.KeyPEM, err = ca.IssueServing(hosts); err != nil {
		return ServingFiles{}, err
	}
	for _, file := range []struct {
		name string
		data []byte
	}{{TLSKeyFile, f.KeyPEM}, {TLSCertFile, f.CertPEM}} {
		if err := writeInDir(dir, file.name, file.data); err != nil {
			return ServingFiles{}, err
		}
		f.Written = append(f.Written, file.name)
	}
	return f, nil
}

// loadOrCreateCA loads the CA in dir or, when there is none, creates one
// and appends the files it wrote to written.
func loadOrCreateCA(dir string, written *[]string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	hasCert, err := exists(certPath)
	if err != nil {
		return nil, err
	}
	hasKey, err := exists(keyPath)
	if err != nil {
		return nil, err
	}
	switch {
	case hasCert && hasKey:
		return LoadCA(certPath, keyPath)
	case hasCert:
		return nil, fmt.Errorf("%s exists without %s: cannot sign with that CA (remove it to create a new CA)", certPath, CAKeyFile)
	case hasKey:
		return nil, fmt.Errorf("%s exists without %s (remove it to create a new CA)", keyPath, CACertFile)
	}
	ca, err := NewCA(webhookCAName)
	if err != nil {
		return nil, err
	}
	keyPEM, err := ca.KeyPEM()
	if err != nil {
		return nil, err
	}
	if err := writeInDir(dir, CAKeyFile, keyPEM); err != nil {
		return nil, err
	}
	if err := writeInDir(dir, CACertFile, ca.CertPEM); err != nil {
		return nil, err
	}
	*written = append(*written, CAKeyFile, CACertFile)
	return ca, nil
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// ValidateHosts checks the hosts of a serving certificate: at least one, and
// each an IP address or a lowercase DNS name (RFC 1123 subdomain, optionally
// a wildcard "*.<subdomain>"), such as <service>.<namespace>.svc.
func ValidateHosts(hosts []string) error {
	if len(hosts) == 0 {
		return errors.New("a serving certificate needs at least one host")
	}
	var errs []error
	for _, h := range hosts {
		if net.ParseIP(h) != nil {
			continue
		}
		msgs := validation.IsDNS1123Subdomain(h)
		if strings.HasPrefix(h, "*.") {
			msgs = validation.IsWildcardDNS1123Subdomain(h)
		}
		if len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("host %q is neither an IP address nor a DNS name: %s", h, strings.Join(msgs, "; ")))
		}
	}
	return errors.Join(errs...)
}
