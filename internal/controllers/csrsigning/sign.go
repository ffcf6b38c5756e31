package csrsigning

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/admitd/admitd/internal/pki"
)

// The signing policy of kube-controller-manager's signers: certificates
// start 5 minutes in the past, and those of 8 hours or more end 5 minutes
// early (so that backdating does not lengthen them); no request gets less
// than 10 minutes (twice the backdating).
const (
	backdate    = 5 * time.Minute
	short       = 8 * time.Hour
	minDuration = 10 * time.Minute
)

// DefaultDuration is --cluster-signing-duration's default: one year.
const DefaultDuration = 8760 * time.Hour

// Duration is how long a certificate issued for a request of
// expirationSeconds (nil: none) lasts, when the signer's longest is
// longest: the request's, but no more than longest and (checked after)
// no less than 10 minutes.
func Duration(longest time.Duration, expirationSeconds *int32) time.Duration {
	if expirationSeconds == nil {
		return longest
	}
	switch requested := time.Duration(*expirationSeconds) * time.Second; {
	case requested > longest:
		return longest
	case requested < minDuration:
		return minDuration
	default:
		return requested
	}
}

// parseRequest decodes a CSR's spec.request.
func parseRequest(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

var serialLimit = new(big.Int).Lsh(big.NewInt(1), 128)

// Certificate is the DER certificate ca issues for req (after checking its
// signature), valid from now for ttl under the signing policy, with the
// key usages usages name; it never outlives ca's own certificate.
func Certificate(ca *pki.CA, req *x509.CertificateRequest, usages []certificatesv1.KeyUsage, ttl time.Duration, now time.Time) ([]byte, error) {
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("unable to verify certificate request signature: %v", err)
	}
	serial, err := rand.Int(rand.Reader, serialLimit)
	if err != nil {
		return nil, fmt.Errorf("unable to generate a serial number for %s: %v", req.Subject.CommonName, err)
	}
	tmpl, err := Template(req, usages, ttl, now, ca.Cert.NotAfter)
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, req.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("failed to sign certificate: %v", err)
	}
	return der, nil
}

// Template is the certificate issued for req, serial number aside: its
// subject and subject alternative names, the key usages usages name
// (extended ones in ascending order), not a CA, valid from now minus the
// backdating for ttl (minus the backdating again from 8 hours), ending no
// later than the signer's certificate (signerNotAfter).
func Template(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage, ttl time.Duration, now, signerNotAfter time.Time) (*x509.Certificate, error) {
	keyUsage, extUsages, err := keyUsages(usages)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		Subject: req.Subject, DNSNames: req.DNSNames, IPAddresses: req.IPAddresses, EmailAddresses: req.EmailAddresses, URIs: req.URIs,
		PublicKeyAlgorithm: req.PublicKeyAlgorithm, PublicKey: req.PublicKey,
		KeyUsage: keyUsage, ExtKeyUsage: extUsages, BasicConstraintsValid: true,
		NotBefore: now.Add(-backdate),
	}
	if ttl < short {
		tmpl.NotAfter = now.Add(ttl)
	} else {
		tmpl.NotAfter = now.Add(ttl - backdate)
	}
	if !tmpl.NotAfter.Before(signerNotAfter) {
		tmpl.NotAfter = signerNotAfter
	}
	if !tmpl.NotBefore.Before(signerNotAfter) {
		return nil, fmt.Errorf("the signer has expired: NotAfter=%v", signerNotAfter)
	}
	if !now.Before(signerNotAfter) {
		return nil, fmt.Errorf("refusing to sign a certificate that expired in the past: NotAfter=%v", signerNotAfter)
	}
	return tmpl, nil
}

var keyUsageBits = map[certificatesv1.KeyUsage]x509.KeyUsage{
	certificatesv1.UsageSigning:           x509.KeyUsageDigitalSignature,
	certificatesv1.UsageDigitalSignature:  x509.KeyUsageDigitalSignature,
	certificatesv1.UsageContentCommitment: x509.KeyUsageContentCommitment,
	certificatesv1.UsageKeyEncipherment:   x509.KeyUsageKeyEncipherment,
	certificatesv1.UsageKeyAgreement:      x509.KeyUsageKeyAgreement,
	certificatesv1.UsageDataEncipherment:  x509.KeyUsageDataEncipherment,
	certificatesv1.UsageCertSign:          x509.KeyUsageCertSign,
	certificatesv1.UsageCRLSign:           x509.KeyUsageCRLSign,
	certificatesv1.UsageEncipherOnly:      x509.KeyUsageEncipherOnly,
	certificatesv1.UsageDecipherOnly:      x509.KeyUsageDecipherOnly,
}

var extKeyUsages = map[certificatesv1.KeyUsage]x509.ExtKeyUsage{
	certificatesv1.UsageAny:             x509.ExtKeyUsageAny,
	certificatesv1.UsageServerAuth:      x509.ExtKeyUsageServerAuth,
	certificatesv1.UsageClientAuth:      x509.ExtKeyUsageClientAuth,
	certificatesv1.UsageCodeSigning:     x509.ExtKeyUsageCodeSigning,
	certificatesv1.UsageEmailProtection: x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageSMIME:           x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageIPsecEndSystem:  x509.ExtKeyUsageIPSECEndSystem,
	certificatesv1.UsageIPsecTunnel:     x509.ExtKeyUsageIPSECTunnel,
	certificatesv1.UsageIPsecUser:       x509.ExtKeyUsageIPSECUser,
	certificatesv1.UsageTimestamping:    x509.ExtKeyUsageTimeStamping,
	certificatesv1.UsageOCSPSigning:     x509.ExtKeyUsageOCSPSigning,
	certificatesv1.UsageMicrosoftSGC:    x509.ExtKeyUsageMicrosoftServerGatedCrypto,
	certificatesv1.UsageNetscapeSGC:     x509.ExtKeyUsageNetscapeServerGatedCrypto,
}

// keyUsages is the key usage bits and the distinct extended key usages
// (ascending) usages name; a usage of neither kind is refused.
func keyUsages(usages []certificatesv1.KeyUsage) (x509.KeyUsage, []x509.ExtKeyUsage, error) {
	var bits x509.KeyUsage
	var ext []x509.ExtKeyUsage
	var unknown []certificatesv1.KeyUsage
	for _, u := range usages {
		if b, ok := keyUsageBits[u]; ok {
			bits |= b
		} else if e, ok := extKeyUsages[u]; ok {
			ext = append(ext, e)
		} else {
			unknown = append(unknown, u)
		}
	}
	if len(unknown) > 0 {
		return 0, nil, fmt.Errorf("unrecognized usage values: %q", unknown)
	}
	slices.Sort(ext)
	return bits, slices.Compact(ext), nil
}
