package csrsigning

import (
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
)

// The signers kube-controller-manager runs.
const (
	KubeAPIServerClient        = certificatesv1.KubeAPIServerClientSignerName
	KubeAPIServerClientKubelet = certificatesv1.KubeAPIServerClientKubeletSignerName
	KubeletServing             = certificatesv1.KubeletServingSignerName
	LegacyUnknown              = certificatesv1beta1.LegacyUnknownSignerName
)

// Signers are the names of the signers kube-controller-manager runs.
var Signers = []string{KubeletServing, KubeAPIServerClientKubelet, KubeAPIServerClient, LegacyUnknown}

// Upstream's messages for requests its kubelet signers refuse.
var (
	errOrganizationNotNodes = errors.New("subject organization is not system:nodes")
	errCommonNameNotNode    = errors.New("subject common name does not begin with system:node:")
	errDNSOrIPSANRequired   = errors.New("DNS or IP subjectAltName is required")
	errDNSSANNotAllowed     = errors.New("DNS subjectAltNames are not allowed")
	errEmailSANNotAllowed   = errors.New("Email subjectAltNames are not allowed")
	errIPSANNotAllowed      = errors.New("IP subjectAltNames are not allowed")
	errURISANNotAllowed     = errors.New("URI subjectAltNames are not allowed")
)

// Validate reports why the signer named signer refuses req with usages
// (nil: it signs it). A signer it does not know refuses nothing.
func Validate(signer string, req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	switch signer {
	case KubeletServing:
		return validateKubeletServing(req, usages)
	case KubeAPIServerClientKubelet:
		return validateKubeletClient(req, usages)
	case KubeAPIServerClient:
		return validateClientUsages(usages)
	}
	return nil // legacy-unknown signs anything, as it did in v1beta1
}

// usageSet is a set of usages, sorted and without repeats.
func usageSet(usages []certificatesv1.KeyUsage) []string {
	out := make([]string, len(usages))
	for i, u := range usages {
		out[i] = string(u)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// usagesOneOf: usages, as a set, is one of sets; otherwise the error names
// the first.
func usagesOneOf(usages []certificatesv1.KeyUsage, sets ...[]certificatesv1.KeyUsage) error {
	got := usageSet(usages)
	for _, s := range sets {
		if slices.Equal(got, usageSet(s)) {
			return nil
		}
	}
	return fmt.Errorf("usages did not match %v", usageSet(sets[0]))
}

func nodesOrganization(req *x509.CertificateRequest) bool {
	return len(req.Subject.Organization) == 1 && req.Subject.Organization[0] == "system:nodes"
}

func validateKubeletServing(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	switch {
	case !nodesOrganization(req):
		return errOrganizationNotNodes
	case len(req.DNSNames) == 0 && len(req.IPAddresses) == 0:
		return errDNSOrIPSANRequired
	case len(req.EmailAddresses) > 0:
		return errEmailSANNotAllowed
	case len(req.URIs) > 0:
		return errURISANNotAllowed
	}
	if err := usagesOneOf(usages,
		[]certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth},
		[]certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}); err != nil {
		return err
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errCommonNameNotNode
	}
	return nil
}

func validateKubeletClient(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	switch {
	case !nodesOrganization(req):
		return errOrganizationNotNodes
	case len(req.DNSNames) > 0:
		return errDNSSANNotAllowed
	case len(req.EmailAddresses) > 0:
		return errEmailSANNotAllowed
	case len(req.IPAddresses) > 0:
		return errIPSANNotAllowed
	case len(req.URIs) > 0:
		return errURISANNotAllowed
	case !strings.HasPrefix(req.Subject.CommonName, "system:node:"):
		return errCommonNameNotNode
	}
	return usagesOneOf(usages,
		[]certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
		[]certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth})
}

// validateClientUsages: client auth, and at most digital signature and
// key encipherment besides.
func validateClientUsages(usages []certificatesv1.KeyUsage) error {
	hasClientAuth := false
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment:
		case certificatesv1.UsageClientAuth:
			hasClientAuth = true
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !hasClientAuth {
		return fmt.Errorf("missing required usage for client certificate: %s", certificatesv1.UsageClientAuth)
	}
	return nil
}
