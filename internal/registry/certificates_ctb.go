package registry

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ClusterTrustBundle's strategy, as upstream's
// pkg/registry/certificates/clustertrustbundle: no defaults, no
// preparation, no warnings; the name depends on the signer name, the trust
// bundle must hold distinct CA certificates only, and the signer name is
// immutable. An update that keeps the trust bundle does not parse it again.

var (
	signerNameFld  = specPath.Child("signerName")
	trustBundleFld = specPath.Child("trustBundle")
)

// maxTrustBundleSize is the largest trust bundle accepted, in bytes.
const maxTrustBundleSize = 1 << 20

func clusterTrustBundleStrategy() Strategy {
	return Strategy{
		NameFor: func(obj runtime.Object) NameValidator {
			return clusterTrustBundleName(obj.(*certificatesv1.ClusterTrustBundle).Spec.SignerName)
		},
		Validate: func(obj runtime.Object) field.ErrorList {
			return uniqueMessages(validateClusterTrustBundleSpec(&obj.(*certificatesv1.ClusterTrustBundle).Spec, true))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			b, was := obj.(*certificatesv1.ClusterTrustBundle), old.(*certificatesv1.ClusterTrustBundle)
			// Upstream checks the whole object as new, then the update.
			errs := ValidateObjectMeta(b, false, clusterTrustBundleName(b.Spec.SignerName))
			errs = append(errs, validateClusterTrustBundleSpec(&b.Spec, b.Spec.TrustBundle != was.Spec.TrustBundle)...)
			errs = append(errs, apivalidation.ValidateImmutableField(b.Spec.SignerName, was.Spec.SignerName, signerNameFld)...)
			return uniqueMessages(errs)
		},
	}
}

// clusterTrustBundleName is the name rule of a bundle for signer: a DNS
// subdomain without ":" when there is no signer, else the signer name with
// "/" written ":", then ":", then a DNS subdomain.
func clusterTrustBundleName(signer string) NameValidator {
	return func(name string, prefix bool) []string {
		if signer == "" {
			if strings.Contains(name, ":") {
				return []string{`ClusterTrustBundle without signer name must not have ":" in its name`}
			}
			return apivalidation.NameIsDNSSubdomain(name, prefix)
		}
		want := strings.ReplaceAll(signer, "/", ":") + ":"
		rest, ok := strings.CutPrefix(name, want)
		if !ok {
			return []string{fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signer, want)}
		}
		return apivalidation.NameIsDNSSubdomain(rest, prefix)
	}
}

func validateClusterTrustBundleSpec(s *certificatesv1.ClusterTrustBundleSpec, parseBundle bool) field.ErrorList {
	var errs field.ErrorList
	if s.SignerName != "" {
		errs = append(errs, validateSignerName(signerNameFld, s.SignerName)...)
	}
	if parseBundle {
		errs = append(errs, validateTrustBundle(trustBundleFld, s.TrustBundle)...)
	}
	return errs
}

// validateSignerName: a signer name is "<domain>/<path>", the domain DNS
// labels joined by dots (at least two), the path DNS subdomains joined by
// dots; only the first bad label of each part is reported.
func validateSignerName(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	domain, path, ok := strings.Cut(name, "/")
	if !ok || strings.Contains(path, "/") {
		return field.ErrorList{field.Invalid(p, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs field.ErrorList
	const maxDomain = validation.DNS1123SubdomainMaxLength
	if len(domain) > maxDomain {
		errs = append(errs, field.TooLong(p, "", maxDomain))
	}
	labels := strings.Split(domain, ".")
	errs = append(errs, firstBadLabel(p, domain, labels, validation.IsDNS1123Label)...)
	if len(labels) < 2 {
		errs = append(errs, field.Invalid(p, domain, "should be a domain with at least two segments separated by dots"))
	}
	errs = append(errs, firstBadLabel(p, path, strings.Split(path, "."), validation.IsDNS1123Subdomain)...)
	if maxName := maxDomain + validation.DNS1123SubdomainMaxLength + validation.DNS1123LabelMaxLength + 2; len(name) > maxName {
		errs = append(errs, field.TooLong(p, "", maxName))
	}
	return errs
}

// firstBadLabel reports the messages of the first label check refuses.
func firstBadLabel(p *field.Path, part string, labels []string, check func(string) []string) field.ErrorList {
	for _, l := range labels {
		msgs := check(l)
		if len(msgs) == 0 {
			continue
		}
		errs := make(field.ErrorList, 0, len(msgs))
		for _, m := range msgs {
			errs = append(errs, field.Invalid(p, part, fmt.Sprintf("validating label %q: %s", l, m)))
		}
		return errs
	}
	return nil
}

// omitted is the value a trust bundle error shows.
const omitted = "<value omitted>"

// validateTrustBundle: at most 1 MiB of PEM CERTIFICATE blocks without
// headers, each a CA certificate with valid basic constraints. Only when
// every block is good are the missing and repeated anchors reported.
func validateTrustBundle(p *field.Path, bundle string) field.ErrorList {
	if len(bundle) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(p, "", maxTrustBundleSize)}
	}
	var errs field.ErrorList
	seen := map[string][]int{}
	var order []string
	rest := []byte(bundle)
	for i := 0; ; i++ {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if msg := badAnchor(b); msg != "" {
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("entry %d %s", i, msg)))
			continue
		}
		if _, ok := seen[string(b.Bytes)]; !ok {
			order = append(order, string(b.Bytes))
		}
		seen[string(b.Bytes)] = append(seen[string(b.Bytes)], i)
	}
	if len(errs) > 0 {
		return errs
	}
	if len(seen) == 0 {
		return field.ErrorList{field.Invalid(p, omitted, "at least one trust anchor must be provided")}
	}
	for _, k := range order {
		if at := seen[k]; len(at) > 1 {
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("duplicate trust anchor (indices %v)", at)))
		}
	}
	return errs
}

// badAnchor is what is wrong with a PEM block as a trust anchor, "" if
// nothing.
func badAnchor(b *pem.Block) string {
	if b.Type != "CERTIFICATE" {
		return "has bad block type: " + b.Type
	}
	if len(b.Headers) != 0 {
		return "has PEM block headers"
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	switch {
	case err != nil:
		return "does not parse as X.509"
	case !cert.IsCA:
		return "does not have the CA bit set"
	case !cert.BasicConstraintsValid:
		return "has invalid basic constraints"
	}
	return ""
}
