package registry

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodCertificateRequest's strategy, as upstream's
// pkg/registry/certificates/podcertificaterequest: v1 decoding defaults
// maxExpirationSeconds to a day; a create is checked in full (the pod,
// service account and node it names, the signer, the expiration, the stub
// PKCS#10 request and its key); every field of spec is immutable. v1 has
// no pkixPublicKey or proofOfPossession, so a request always carries a
// stub PKCS#10 request. Status writes: certificates_pcr_status.go.

// PodCertificateRequest limits (upstream's pkg/apis/certificates).
const (
	minMaxExpiration     = 3600
	maxMaxExpiration     = 91 * 24 * 3600
	maxKubeMaxExpiration = 24 * 3600
	maxStubRequestSize   = 10 * 1024
	maxUIDLength         = 128
)

var stubRequestFld = specPath.Child("stubPKCS10Request")

func podCertificateRequestStrategy() Strategy {
	return Strategy{
		Default: func(obj runtime.Object) {
			s := &obj.(*certificatesv1.PodCertificateRequest).Spec
			if s.MaxExpirationSeconds == nil {
				day := int32(maxKubeMaxExpiration)
				s.MaxExpirationSeconds = &day
			}
		},
		Validate: func(obj runtime.Object) field.ErrorList {
			return uniqueMessages(validatePodCertificateRequestSpec(&obj.(*certificatesv1.PodCertificateRequest).Spec))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			s, was := &obj.(*certificatesv1.PodCertificateRequest).Spec, &old.(*certificatesv1.PodCertificateRequest).Spec
			if apiequality.Semantic.DeepEqual(s, was) {
				return nil
			}
			return field.ErrorList{field.Invalid(specPath, internalPCRSpec(s), fieldImmutable)}
		},
		Subresources: map[string]SubresourceStrategy{"status": podCertificateRequestStatusStrategy()},
	}
}

func validatePodCertificateRequestSpec(s *certificatesv1.PodCertificateRequestSpec) field.ErrorList {
	errs := validateSignerName(signerNameFld, s.SignerName)
	if s.UnverifiedUserAnnotations != nil {
		errs = append(errs, validateUserAnnotations(s.UnverifiedUserAnnotations, specPath.Child("unverifiedUserAnnotations"))...)
	}
	errs = append(errs, dnsSubdomainName(s.PodName, specPath.Child("podName"))...)
	errs = append(errs, requiredUID(s.PodUID, specPath.Child("podUID"))...)
	errs = append(errs, dnsSubdomainName(s.ServiceAccountName, specPath.Child("serviceAccountName"))...)
	errs = append(errs, requiredUID(s.ServiceAccountUID, specPath.Child("serviceAccountUID"))...)
	errs = append(errs, dnsSubdomainName(string(s.NodeName), specPath.Child("nodeName"))...)
	errs = append(errs, requiredUID(s.NodeUID, specPath.Child("nodeUID"))...)
	exp := specPath.Child("maxExpirationSeconds")
	if s.MaxExpirationSeconds == nil {
		return append(errs, field.Required(exp, "must be set"))
	}
	limit := maxMaxExpiration
	if isKubernetesSigner(s.SignerName) {
		limit = maxKubeMaxExpiration
	}
	if e := int(*s.MaxExpirationSeconds); e < minMaxExpiration || e > limit {
		errs = append(errs, field.Invalid(exp, s.MaxExpirationSeconds, fmt.Sprintf("must be in the range [%d, %d]", minMaxExpiration, limit)))
	}
	if len(s.StubPKCS10Request) == 0 {
		return append(errs, field.Invalid(specPath, field.OmitValueType{},
			"exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"))
	}
	return append(errs, validateStubRequest(s.StubPKCS10Request)...)
}

// dnsSubdomainName reports name's DNS subdomain errors at p, the rule of
// pod, service account and node names.
func dnsSubdomainName(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// requiredUID: a UID is set and at most 128 bytes.
func requiredUID(uid types.UID, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(uid) == 0 {
		errs = append(errs, field.Invalid(p, uid, "must not be empty"))
	}
	if len(uid) > maxUIDLength {
		errs = append(errs, field.TooLong(p, uid, maxUIDLength))
	}
	return errs
}

// isKubernetesSigner: the signer's domain is kubernetes.io or under it.
func isKubernetesSigner(signer string) bool {
	domain, _, _ := strings.Cut(signer, "/")
	return domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io")
}

// validateUserAnnotations: each key, lower-cased, is a label key with a
// domain prefix; the whole map fits the annotation size limit.
func validateUserAnnotations(annotations map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k := range annotations {
		errs = append(errs, validation.IsDomainPrefixedKey(p, strings.ToLower(k))...)
	}
	if apivalidation.ValidateAnnotationsSize(annotations) != nil {
		errs = append(errs, field.TooLong(p, "", apivalidation.TotalAnnotationSizeLimitB))
	}
	return errs
}

// validateStubRequest: a signed PKCS#10 request of at most 10 KiB for an
// Ed25519, ECDSA (P-256, P-384, P-521) or RSA (3072 or 4096 bits) key; its
// contents are not checked.
func validateStubRequest(der []byte) field.ErrorList {
	if len(der) > maxStubRequestSize {
		return field.ErrorList{field.TooLong(stubRequestFld, der, maxStubRequestSize)}
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return field.ErrorList{field.Invalid(stubRequestFld, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	switch pub := req.PublicKey.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if c := pub.Curve; c != elliptic.P256() && c != elliptic.P384() && c != elliptic.P521() {
			return field.ErrorList{field.Invalid(stubRequestFld, "curve "+c.Params().Name, "elliptic public keys must use curve P256, P384, or P521")}
		}
	case *rsa.PublicKey:
		if bits := pub.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(stubRequestFld, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(stubRequestFld, field.OmitValueType{}, "unknown public key type; supported types are Ed25519, ECDSA, and RSA")}
	}
	if req.CheckSignature() != nil {
		return field.ErrorList{field.Invalid(stubRequestFld, field.OmitValueType{}, "invalid signature")}
	}
	return nil
}

// internalPCRSpec is a spec as kube-apiserver shows it in an error: the
// JSON of its internal type, with Go field names and the two deprecated
// key fields v1 does not have.
func internalPCRSpec(s *certificatesv1.PodCertificateRequestSpec) json.RawMessage {
	data, err := json.Marshal(struct {
		SignerName, PodName              string
		PodUID                           types.UID
		ServiceAccountName               string
		ServiceAccountUID                types.UID
		NodeName                         types.NodeName
		NodeUID                          types.UID
		MaxExpirationSeconds             *int32
		PKIXPublicKey, ProofOfPossession []byte
		StubPKCS10Request                []byte
		UnverifiedUserAnnotations        map[string]string
	}{s.SignerName, s.PodName, s.PodUID, s.ServiceAccountName, s.ServiceAccountUID, s.NodeName, s.NodeUID,
		s.MaxExpirationSeconds, nil, nil, s.StubPKCS10Request, s.UnverifiedUserAnnotations})
	if err != nil {
		return json.RawMessage("null")
	}
	return data
}
