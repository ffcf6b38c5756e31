package registry

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A PodCertificateRequest status write, as upstream's status strategy: the
// stored spec and the metadata a status strategy resets are kept; the
// status may change only once, into one terminal condition (Issued,
// Denied or Failed, status True). A denial or failure carries nothing
// else; an issue carries a certificate chain whose leaf was issued for the
// request's key, with times that agree with it and with the server's
// clock. A write that changes the status also needs "sign" on the signer
// (SignerCheck).

var (
	statusFld        = field.NewPath("status")
	certChainFld     = statusFld.Child("certificateChain")
	notBeforeFld     = statusFld.Child("notBefore")
	notAfterFld      = statusFld.Child("notAfter")
	beginRefreshFld  = statusFld.Child("beginRefreshAt")
	pcrTerminalTypes = []string{"Issued", "Denied", "Failed"}
)

// maxCertificateChainSize is the largest certificate chain accepted.
const maxCertificateChainSize = 100 * 1024

// pcrClock is the time a status write is checked against.
var pcrClock = time.Now

func podCertificateRequestStatusStrategy() SubresourceStrategy {
	return SubresourceStrategy{
		PrepareForUpdate: func(obj, old runtime.Object, _ FeatureGates) {
			r, was := obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest)
			r.Spec = *was.Spec.DeepCopy()
			metav1.ResetObjectMetaForStatus(&r.ObjectMeta, &was.ObjectMeta)
		},
		ValidateUpdate: func(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
			if errs := ValidateObjectMetaUpdate(obj, old); len(errs) > 0 {
				return errs
			}
			r, was := obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest)
			return validatePCRStatus(r, was, pcrClock())
		},
		SignerCheck: func(obj, old runtime.Object) *SignerCheck {
			r, was := obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest)
			if apiequality.Semantic.DeepEqual(r.Status, was.Status) {
				return nil
			}
			return &SignerCheck{Verb: "sign", Signer: was.Spec.SignerName, Field: signerNameFld}
		},
	}
}

func validatePCRStatus(r, was *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	if errs := validatePCRConditions(r.Status.Conditions); len(errs) > 0 {
		return errs
	}
	if pcrState(was) != "" {
		return unchanged(r.Status, was.Status, statusFld, "immutable after PodCertificateRequest is issued, denied, or failed")
	}
	switch pcrState(r) {
	case "Denied", "Failed":
		want := certificatesv1.PodCertificateRequestStatus{Conditions: r.Status.Conditions}
		return unchanged(r.Status, want, statusFld, "non-condition status fields must be empty when denying or failing the PodCertificateRequest")
	case "Issued":
		return validateIssued(r, was, now)
	}
	return unchanged(r.Status, was.Status, statusFld, `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)
}

// validatePCRConditions: only terminal types, at most one, each True, and
// the conditions well-formed.
func validatePCRConditions(conds []metav1.Condition) field.ErrorList {
	var errs field.ErrorList
	terminal := 0
	for i, c := range conds {
		// Upstream names the index as a path element of its own.
		p := statusFld.Child("conditions", fmt.Sprintf("[%d]", i))
		if !isPCRTerminal(c.Type) {
			errs = append(errs, field.NotSupported(p.Child("type"), c.Type, pcrTerminalTypes))
			continue
		}
		if terminal++; terminal > 1 {
			errs = append(errs, field.Invalid(p.Child("type"), c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
		}
		if c.Status != metav1.ConditionTrue {
			errs = append(errs, field.NotSupported(p.Child("status"), c.Status, []metav1.ConditionStatus{metav1.ConditionTrue}))
		}
	}
	return append(errs, metav1validation.ValidateConditions(conds, statusFld.Child("conditions"))...)
}

func isPCRTerminal(t string) bool {
	return t == "Issued" || t == "Denied" || t == "Failed"
}

// pcrState is the terminal condition of r with status True ("" for none;
// the last of several).
func pcrState(r *certificatesv1.PodCertificateRequest) string {
	state := ""
	for _, t := range pcrTerminalTypes {
		for _, c := range r.Status.Conditions {
			if c.Type == t && c.Status == metav1.ConditionTrue && state == "" {
				state = t
			}
		}
	}
	return state
}

// unchanged is the error of a value that had to stay as it was.
func unchanged(v, was any, p *field.Path, detail string) field.ErrorList {
	if apiequality.Semantic.DeepEqual(v, was) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, field.OmitValueType{}, detail)}
}

// validateIssued checks the chain and times of an Issued request.
func validateIssued(r, was *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	st := &r.Status
	leaf, rest, errs := parseLeaf(st.CertificateChain)
	if errs != nil {
		return errs
	}
	errs = leafNameErrors(leaf)
	want, keyErrs := requestedKey(&was.Spec)
	if keyErrs != nil {
		return append(errs, keyErrs...)
	}
	if k, ok := want.(interface{ Equal(crypto.PublicKey) bool }); ok && !k.Equal(leaf.PublicKey) {
		return append(errs, field.Invalid(certChainFld, st.CertificateChain, "leaf certificate was not issued to the requested public key"))
	}
	if errs = append(errs, missingTimes(st)...); len(errs) > 0 {
		return errs
	}
	if e := validateIssuedTimes(st, leaf, *r.Spec.MaxExpirationSeconds, now); e != nil {
		return e
	}
	return validateIntermediates(rest, st.CertificateChain)
}

// parseLeaf parses the first block of the chain as the leaf certificate.
func parseLeaf(chain string) (*x509.Certificate, []byte, field.ErrorList) {
	if len(chain) > maxCertificateChainSize {
		return nil, nil, field.ErrorList{field.TooLong(certChainFld, chain, maxCertificateChainSize)}
	}
	b, rest := pem.Decode([]byte(chain))
	invalid := func(msg string) field.ErrorList { return field.ErrorList{field.Invalid(certChainFld, chain, msg)} }
	if b == nil {
		return nil, nil, invalid("issued certificate chain must contain at least one certificate")
	}
	if b.Type != "CERTIFICATE" {
		return nil, nil, invalid("issued certificate chain must consist entirely of CERTIFICATE PEM blocks")
	}
	leaf, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return nil, nil, invalid("leaf certificate does not parse as valid X.509")
	}
	return leaf, rest, nil
}

// leafNameErrors are the leaf's malformed DNS names and email addresses.
func leafNameErrors(leaf *x509.Certificate) field.ErrorList {
	var errs field.ErrorList
	for _, n := range leaf.DNSNames {
		if n == "" {
			errs = append(errs, field.Invalid(certChainFld, n, "leaf certificate should not contain empty DNSName"))
		}
		if strings.Contains(n, "..") {
			errs = append(errs, field.Invalid(certChainFld, n, "leaf certificate's DNSName should not contain '..'"))
		}
		if strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".") {
			errs = append(errs, field.Invalid(certChainFld, n, "leaf certificate's DNSName should not start or end with '.'"))
		}
	}
	for _, a := range leaf.EmailAddresses {
		if _, err := mail.ParseAddress(a); err != nil {
			errs = append(errs, field.Invalid(certChainFld, a, "leaf certificate should not contain invalid EmailAddress"))
		}
	}
	return errs
}

// requestedKey is the public key of the stored request's stub CSR.
func requestedKey(s *certificatesv1.PodCertificateRequestSpec) (crypto.PublicKey, field.ErrorList) {
	if len(s.StubPKCS10Request) == 0 {
		return nil, field.ErrorList{field.Invalid(specPath.Child("pkixPublicKey"), field.OmitValueType{}, "must be a valid PKIX-serialized public key")}
	}
	req, err := x509.ParseCertificateRequest(s.StubPKCS10Request)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(stubRequestFld, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	return req.PublicKey, nil
}

func missingTimes(st *certificatesv1.PodCertificateRequestStatus) field.ErrorList {
	var errs field.ErrorList
	if st.NotBefore == nil {
		errs = append(errs, field.Required(notBeforeFld, "must be present and consistent with the issued certificate"))
	}
	if st.NotAfter == nil {
		errs = append(errs, field.Required(notAfterFld, "must be present and consistent with the issued certificate"))
	}
	if st.BeginRefreshAt == nil {
		errs = append(errs, field.Required(beginRefreshFld, "must be present and in the range [notbefore+10min, notafter-10min]"))
	}
	return errs
}

// validateIssuedTimes: notBefore and notAfter are the leaf's, notBefore
// within five minutes of now, the lifetime from an hour to the request's
// maximum, and the refresh time at least ten minutes inside it.
func validateIssuedTimes(st *certificatesv1.PodCertificateRequestStatus, leaf *x509.Certificate, maxSeconds int32, now time.Time) field.ErrorList {
	nb, na, br := st.NotBefore.Time, st.NotAfter.Time, st.BeginRefreshAt.Time
	invalid := func(p *field.Path, v any, msg string) field.ErrorList {
		return field.ErrorList{field.Invalid(p, v, msg)}
	}
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	switch {
	case !nb.Equal(leaf.NotBefore):
		return invalid(notBeforeFld, nb, "must be set to the NotBefore time encoded in the leaf certificate")
	case !(nb.After(now.Add(-5*time.Minute)) && nb.Before(now.Add(5*time.Minute))):
		return invalid(notBeforeFld, nb, "must be set to within 5 minutes of kube-apiserver's current time")
	case !na.Equal(leaf.NotAfter):
		return invalid(notAfterFld, na, "must be set to the NotAfter time encoded in the leaf certificate")
	case lifetime < time.Hour:
		return invalid(certChainFld, lifetime, "leaf certificate lifetime must be >= 1 hour")
	case lifetime > time.Duration(maxSeconds)*time.Second:
		return invalid(certChainFld, lifetime, fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%v)", maxSeconds))
	case br.Before(nb.Add(10 * time.Minute)):
		return invalid(beginRefreshFld, br, "must be at least 10 minutes after status.notBefore")
	case br.After(na.Add(-10 * time.Minute)):
		return invalid(beginRefreshFld, br, "must be at least 10 minutes before status.notAfter")
	}
	return nil
}

// validateIntermediates: the blocks after the leaf are certificates.
func validateIntermediates(rest []byte, chain string) field.ErrorList {
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil
		}
		if b.Type != "CERTIFICATE" {
			// Upstream's message has the typo.
			return field.ErrorList{field.Invalid(certChainFld, chain, "issued certificate chain must consist entirely of CERTFICATE PEM blocks")}
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return field.ErrorList{field.Invalid(certChainFld, chain, "intermediate certificate does not parse as valid X.509")}
		}
	}
}
