package registry

import (
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
			status: statusSubresource, fields: []string{"spec.signerName"},
			subresources: []Subresource{{Name: "approval", Kind: csr, Verbs: subVerbs}}, strategy: csrStrategy()},
		{gv: "certificates.k8s.io/v1", resource: "clustertrustbundles", kind: "ClusterTrustBundle",
			fields: []string{"spec.signerName"}, strategy: clusterTrustBundleStrategy()},
		{gv: "certificates.k8s.io/v1", resource: "podcertificaterequests", kind: "PodCertificateRequest", namespaced: true,
			status: statusReset, name: apivalidation.NameIsDNSSubdomain, fields: []string{"spec.signerName", "spec.podName", "spec.nodeName"},
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
		Validate: validateCSRExpiration,
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

// validateCSRExpiration refuses a requested duration under 10 minutes, as
// upstream's validation. (The rest of upstream's CSR validation, of the
// request, usages, signer name and conditions, is not done yet.)
func validateCSRExpiration(obj runtime.Object) field.ErrorList {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	if s := csr.Spec.ExpirationSeconds; s != nil && *s < 600 {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "expirationSeconds"), *s, "may not specify a duration less than 600 seconds (10 minutes)")}
	}
	return nil
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
