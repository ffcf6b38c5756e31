package auth

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	asn1util "k8s.io/apimachinery/pkg/apis/asn1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// X509Authenticator authenticates requests by their verified TLS client
// certificate: the user is the subject's common name, the groups are its
// organizations, and the UID is the subject's UID attribute (OID
// 0.9.2342.19200300.100.1.1) when present, as with upstream's
// AllowParsingUserUIDFromCertAuth feature, on by default since 1.33.
type X509Authenticator struct {
	opts    x509.VerifyOptions
	cache   verifiedCache
	metrics *AuthenticationMetrics
}

// CountLifetimes makes a record, in m, the remaining lifetime of every
// client certificate presented; it returns a.
func (a *X509Authenticator) CountLifetimes(m *AuthenticationMetrics) *X509Authenticator {
	a.metrics = m
	return a
}

// NewX509 returns an authenticator that accepts client certificates chaining
// to roots and valid for client authentication.
func NewX509(roots *x509.CertPool) *X509Authenticator {
	return &X509Authenticator{opts: x509.VerifyOptions{
		Roots:     roots,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}}
}

// LoadClientCAFile reads the PEM certificates of a --client-ca-file.
func LoadClientCAFile(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading client CA file: %w", err)
	}
	pool := x509.NewCertPool()
	found := false
	for rest := data; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("client CA file %s: %w", path, err)
		}
		pool.AddCert(cert)
		found = true
	}
	if !found {
		return nil, fmt.Errorf("client CA file %s holds no PEM certificate", path)
	}
	return pool, nil
}

// Authenticate implements Authenticator. A request without a client
// certificate has no credential; one whose certificate does not verify is
// an error. Certificates after the first are used as intermediates.
func (a *X509Authenticator) Authenticate(r *http.Request) (authenticationv1.UserInfo, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return authenticationv1.UserInfo{}, false, nil
	}
	now := time.Now()
	a.metrics.ObserveClientCertificate(r.TLS.PeerCertificates[0].NotAfter.Sub(now))
	key := a.cache.keyOf(r.TLS.PeerCertificates)
	if user, ok := a.cache.get(key, now); ok {
		return user, true, nil
	}
	user, ok, err := a.verify(r.TLS.PeerCertificates)
	if err == nil && ok {
		a.cache.put(key, user, r.TLS.PeerCertificates[0].NotAfter, time.Now())
	}
	return user, ok, err
}

// verify checks a presented chain and maps it to a user.
func (a *X509Authenticator) verify(certs []*x509.Certificate) (authenticationv1.UserInfo, bool, error) {
	opts := a.opts
	leaf := certs[0]
	if len(certs) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range certs[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	chains, err := leaf.Verify(opts)
	if err != nil {
		return authenticationv1.UserInfo{}, false, fmt.Errorf("verifying certificate %s failed: %w", certificateID(leaf), err)
	}
	var errs []error
	for _, chain := range chains {
		user, ok, err := userFromCertificate(chain[0])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return user, true, nil
		}
	}
	return authenticationv1.UserInfo{}, false, utilerrors.NewAggregate(errs)
}

// userFromCertificate maps a verified certificate to a user. A certificate
// without a common name names nobody: no user, no error.
func userFromCertificate(cert *x509.Certificate) (authenticationv1.UserInfo, bool, error) {
	if cert.Subject.CommonName == "" {
		return authenticationv1.UserInfo{}, false, nil
	}
	uid, err := certificateUID(cert)
	if err != nil {
		return authenticationv1.UserInfo{}, false, err
	}
	fingerprint := sha256.Sum256(cert.Raw)
	return authenticationv1.UserInfo{
		Username: cert.Subject.CommonName,
		UID:      uid,
		Groups:   append([]string(nil), cert.Subject.Organization...),
		Extra: map[string]authenticationv1.ExtraValue{
			CredentialIDKey: {"X509SHA256=" + hex.EncodeToString(fingerprint[:])},
		},
	}, true, nil
}

var uidOID = asn1util.X509UID()

func certificateUID(cert *x509.Certificate) (string, error) {
	var uids []string
	for _, name := range cert.Subject.Names {
		if !name.Type.Equal(uidOID) {
			continue
		}
		uid, ok := name.Value.(string)
		if !ok {
			return "", errors.New("unable to parse UID into a string")
		}
		uids = append(uids, uid)
	}
	switch {
	case len(uids) == 0:
		return "", nil
	case len(uids) > 1:
		return "", fmt.Errorf("expected 1 UID, but found multiple: %v", uids)
	case uids[0] == "":
		return "", errors.New("UID cannot be an empty string")
	}
	return uids[0], nil
}

// certificateID names a certificate in errors without leaking its subject:
// serial number and key identifiers, as upstream logs them.
func certificateID(c *x509.Certificate) string {
	return fmt.Sprintf("SN=%d, SKID=%s, AKID=%s", c.SerialNumber, colonHex(c.SubjectKeyId), colonHex(c.AuthorityKeyId))
}

func colonHex(b []byte) string {
	parts := make([]string, len(b))
	for i, v := range b {
		parts[i] = fmt.Sprintf("%02X", v)
	}
	return strings.Join(parts, ":")
}
