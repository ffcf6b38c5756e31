package registry

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// certificatesKinds are the kinds of certificates.k8s.io/v1 as
// kube-apiserver 1.37 serves them (pkg/registry/certificates), in name
// order. ClusterTrustBundle and PodCertificateRequest are GA in 1.37 and
// their gates (ClusterTrustBundle, PodCertificateRequest) on by default;
// their v1beta1 and v1alpha1 versions stay off. Neither has short names.
//
// ClusterTrustBundle is cluster-scoped, without status
// (certificates_ctb.go). PodCertificateRequest is namespaced with a status
// subresource: a create starts from an empty status, a write of the main
// resource keeps the stored one, and a status write, whose own rules are
// in certificates_pcr_status.go, keeps the stored spec.
func certificatesKinds() []descriptor {
	csr := schema.GroupVersionKind{Group: "certificates.k8s.io", Version: "v1", Kind: "CertificateSigningRequest"}
	return []descriptor{
		{gv: "certificates.k8s.io/v1", resource: "certificatesigningrequests", kind: "CertificateSigningRequest", short: []string{"csr"},
			status: statusSubresource, fields: []string{"spec.signerName"}, strictFields: true,
			subresources: []Subresource{{Name: "approval", Kind: csr, Verbs: subVerbs}}, strategy: csrStrategy()},
		{gv: "certificates.k8s.io/v1", resource: "clustertrustbundles", kind: "ClusterTrustBundle",
			fields: []string{"spec.signerName"}, strictFields: true, strategy: clusterTrustBundleStrategy()},
		{gv: "certificates.k8s.io/v1", resource: "podcertificaterequests", kind: "PodCertificateRequest", namespaced: true,
			status: statusReset, name: apivalidation.NameIsDNSSubdomain, fields: []string{"spec.signerName", "spec.podName", "spec.nodeName"}, strictFields: true,
			strategy: podCertificateRequestStrategy()},
	}
}

// csrStrategy is upstream's preparation of CertificateSigningRequests: a
// create records who asked (spec.username, uid, groups, extra) and starts
// without status; the main resource changes only metadata; the approval
// subresource changes only the conditions and the status subresource
// keeps the Approved and Denied conditions; condition timestamps are
// filled in.
func csrStrategy() Strategy {
	return Strategy{
		PrepareForCreateBy: func(obj runtime.Object, user authenticationv1.UserInfo) {
			csr := obj.(*certificatesv1.CertificateSigningRequest)
			csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = user.Username, user.UID, user.Groups, nil
			if len(user.Extra) > 0 {
				csr.Spec.Extra = map[string]certificatesv1.ExtraValue{}
				for k, v := range user.Extra {
					csr.Spec.Extra[k] = certificatesv1.ExtraValue(v)
				}
			}
		},
		PrepareForCreate: func(obj runtime.Object) {
			obj.(*certificatesv1.CertificateSigningRequest).Status = certificatesv1.CertificateSigningRequestStatus{
				Conditions: []certificatesv1.CertificateSigningRequestCondition{}}
		},
		NameFor:        func(runtime.Object) NameValidator { return anyName },
		Validate:       validateCSRCreate,
		ValidateUpdate: validateCSRUpdate,
		Subresources: map[string]SubresourceStrategy{
			"status":   {ValidateUpdate: validateCSRStatusUpdate},
			"approval": {ValidateUpdate: validateCSRApprovalUpdate},
		},
		PrepareForUpdate: func(obj, old runtime.Object) {
			csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
			csr.Spec, csr.Status = oldCSR.Spec, oldCSR.Status
		},
		PrepareForSubresourceUpdate: func(subresource string, obj, old runtime.Object) {
			csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
			switch subresource {
			case "status":
				csr.Spec = oldCSR.Spec
				preserveConditions(csr, oldCSR, certificatesv1.CertificateApproved)
				preserveConditions(csr, oldCSR, certificatesv1.CertificateDenied)
				stampConditions(csr, oldCSR)
			case "approval":
				stampConditions(csr, oldCSR)
				conditions := csr.Status.Conditions
				csr.Spec, csr.Status = oldCSR.Spec, oldCSR.Status
				csr.Status.Conditions = conditions
			}
		},
	}
}

// validateCSRCreate checks a new request as upstream's create validation
// for certificates.k8s.io/v1: a PEM CERTIFICATE REQUEST whose signature
// holds, usages given, known and not repeated, a signer name of the form
// domain/path (never the legacy signer, which no longer serves v1), and
// at least 10 minutes asked for. Conditions and certificate are empty on
// create (PrepareForCreate). Any name will do for a request; the rule
// every name meets to be a path segment is checked last, and only when
// nothing else failed, as upstream's create does.
func validateCSRCreate(obj runtime.Object) field.ErrorList {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	errs := validateCSRSpec(csr, csrTolerance{})
	if len(errs) == 0 && len(validateObjectMetaOfCSR(csr)) == 0 {
		errs = ValidateObjectMeta(csr, false, pathSegmentName)
	}
	return errs
}

func validateCSRSpec(csr *certificatesv1.CertificateSigningRequest, tolerate csrTolerance) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if err := checkCSRRequest(csr.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(spec.Child("request"), csr.Spec.Request, err.Error()))
	}
	errs = append(errs, validateCSRUsages(spec.Child("usages"), csr.Spec.Usages, tolerate)...)
	if csr.Spec.SignerName == legacyUnknownSigner && !tolerate.legacySigner {
		errs = append(errs, field.Invalid(spec.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, validateSignerName(spec.Child("signerName"), csr.Spec.SignerName)...)
	}
	if s := csr.Spec.ExpirationSeconds; s != nil && *s < 600 {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), *s, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	return errs
}

const legacyUnknownSigner = "kubernetes.io/legacy-unknown"

// checkCSRRequest parses a PEM-encoded PKCS#10 request and checks its
// signature.
func checkCSRRequest(request []byte) error {
	block, _ := pem.Decode(request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return err
	}
	return req.CheckSignature()
}

// knownKeyUsages are the key usages a request may ask for.
var knownKeyUsages = []string{"any", "cert sign", "client auth", "code signing", "content commitment", "crl sign",
	"data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system",
	"ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing",
	"s/mime", "server auth", "signing", "timestamping"}

// validateCSRUsages: at least one usage, each known, none twice (unless
// the stored request already had unknown or repeated ones).
func validateCSRUsages(p *field.Path, usages []certificatesv1.KeyUsage, tolerate csrTolerance) field.ErrorList {
	var errs field.ErrorList
	if len(usages) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	for i, u := range usages {
		if !tolerate.unknownUsages && !slices.Contains(knownKeyUsages, string(u)) {
			errs = append(errs, field.NotSupported(p.Index(i), u, knownKeyUsages))
		}
	}
	seen := make(map[certificatesv1.KeyUsage]bool, len(usages))
	for i, u := range usages {
		if seen[u] && !tolerate.duplicateUsages {
			errs = append(errs, field.Duplicate(p.Index(i), u))
		}
		seen[u] = true
	}
	return errs
}

// preserveConditions puts old's conditions of type typ back in place of
// csr's, when csr has as many of them.
func preserveConditions(csr, old *certificatesv1.CertificateSigningRequest, typ certificatesv1.RequestConditionType) {
	oldIdx, newIdx := conditionIndices(old, typ), conditionIndices(csr, typ)
	if len(oldIdx) != len(newIdx) {
		return
	}
	for i, o := range oldIdx {
		csr.Status.Conditions[newIdx[i]] = old.Status.Conditions[o]
	}
}

func conditionIndices(csr *certificatesv1.CertificateSigningRequest, typ certificatesv1.RequestConditionType) []int {
	var out []int
	for i, c := range csr.Status.Conditions {
		if c.Type == typ {
			out = append(out, i)
		}
	}
	return out
}

// stampConditions sets unset update times to now and unset transition
// times to old's for the same type and status, else now.
func stampConditions(csr, old *certificatesv1.CertificateSigningRequest) {
	now := metav1.Now()
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, o := range old.Status.Conditions {
			if o.Type == c.Type && o.Status == c.Status && !o.LastTransitionTime.IsZero() {
				c.LastTransitionTime = o.LastTransitionTime
				break
			}
		}
	}
}

// PrepareForCreateBy records the requesting user in obj, for kinds that
// keep it (CertificateSigningRequests), where upstream's PrepareForCreate
// reads it from the request context.
func PrepareForCreateBy(r *Resource, obj runtime.Object, user authenticationv1.UserInfo) {
	if r.Strategy.PrepareForCreateBy != nil {
		r.Strategy.PrepareForCreateBy(obj, user)
	}
}
