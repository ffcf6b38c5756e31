package registry

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// csrTolerance is what an update of a CertificateSigningRequest may keep
// or do that a create may not, as upstream's validation options: the
// first group follows from the stored object (data written before a rule
// existed stays writable), the second from the subresource written.
type csrTolerance struct {
	legacySigner, unknownUsages, duplicateUsages  bool
	emptyConditionType, duplicateConditionTypes   bool
	approvedAndDenied, arbitraryCertificate       bool
	settingApprovalConditions, settingCertificate bool
}

// csrToleranceFor is what old's own content lets an update to csr keep.
func csrToleranceFor(csr, old *certificatesv1.CertificateSigningRequest) csrTolerance {
	types := map[certificatesv1.RequestConditionType]int{}
	for _, c := range old.Status.Conditions {
		types[c.Type]++
	}
	duplicateTypes := false
	for _, n := range types {
		duplicateTypes = duplicateTypes || n > 1
	}
	unknown, duplicate := false, false
	for i, u := range old.Spec.Usages {
		unknown = unknown || !slices.Contains(knownKeyUsages, string(u))
		duplicate = duplicate || slices.Contains(old.Spec.Usages[:i], u)
	}
	return csrTolerance{
		legacySigner:            old.Spec.SignerName == legacyUnknownSigner,
		unknownUsages:           unknown,
		duplicateUsages:         duplicate,
		emptyConditionType:      types[""] > 0,
		duplicateConditionTypes: duplicateTypes,
		approvedAndDenied:       types[certificatesv1.CertificateApproved] > 0 && types[certificatesv1.CertificateDenied] > 0,
		arbitraryCertificate:    bytes.Equal(csr.Status.Certificate, old.Status.Certificate) || checkIssuedCertificate(old.Status.Certificate) != nil,
	}
}

// validateCSRUpdate checks a write of the main resource (which keeps the
// stored spec and status), validateCSRStatusUpdate one through /status
// (which may set the certificate) and validateCSRApprovalUpdate one
// through /approval (which may change the Approved and Denied
// conditions), as upstream's three update validations.
func validateCSRUpdate(obj, old runtime.Object) field.ErrorList {
	csr, was := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	// The metadata update is checked before (ValidateChange).
	tolerate := csrToleranceFor(csr, was)
	errs := append(validateObjectMetaOfCSR(csr), validateCSRChange(csr, was, tolerate)...)
	return append(errs, approvedAndDenied(csr, tolerate)...)
}

func validateCSRStatusUpdate(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
	csr, was := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	tolerate := csrToleranceFor(csr, was)
	tolerate.settingCertificate = true
	return validateCSRSubresourceUpdate(csr, was, tolerate)
}

func validateCSRApprovalUpdate(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
	csr, was := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	tolerate := csrToleranceFor(csr, was)
	tolerate.settingApprovalConditions = true
	return validateCSRSubresourceUpdate(csr, was, tolerate)
}

// validateCSRSubresourceUpdate is upstream's order: the object as new, the
// change, then the metadata update.
func validateCSRSubresourceUpdate(csr, was *certificatesv1.CertificateSigningRequest, tolerate csrTolerance) field.ErrorList {
	errs := append(validateObjectMetaOfCSR(csr), validateCSRChange(csr, was, tolerate)...)
	errs = append(errs, ValidateObjectMetaUpdate(csr, was)...)
	return append(errs, approvedAndDenied(csr, tolerate)...)
}

// validateObjectMetaOfCSR: any name will do for a request.
func validateObjectMetaOfCSR(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	return ValidateObjectMeta(csr, false, anyName)
}

// approvedAndDenied is the one error a request that is both Approved and
// Denied gets (unless it already was), after all others: upstream's
// declarative rule, which 1.37 enforces in place of its handwritten one.
func approvedAndDenied(csr *certificatesv1.CertificateSigningRequest, tolerate csrTolerance) field.ErrorList {
	if tolerate.approvedAndDenied || len(conditionsOf(csr, certificatesv1.CertificateApproved)) == 0 ||
		len(conditionsOf(csr, certificatesv1.CertificateDenied)) == 0 {
		return nil
	}
	const approved, denied = `conditions[{"type": "Approved"}]`, `conditions[{"type": "Denied"}]`
	return field.ErrorList{field.Invalid(field.NewPath("status", "conditions"), "{"+approved+", "+denied+"}",
		"must specify at most one of: `"+approved+"`, `"+denied+"`")}
}

// validateCSRChange checks csr as a whole, then what the update did to
// the conditions and the certificate.
func validateCSRChange(csr, was *certificatesv1.CertificateSigningRequest, tolerate csrTolerance) field.ErrorList {
	errs := validateCSRSpec(csr, tolerate)
	errs = append(errs, validateCSRConditions(field.NewPath("status", "conditions"), csr.Status.Conditions, tolerate)...)
	if !tolerate.arbitraryCertificate {
		if err := checkIssuedCertificate(csr.Status.Certificate); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
		}
	}
	errs = append(errs, validateConditionChanges(csr, was, tolerate)...)
	if !bytes.Equal(csr.Status.Certificate, was.Status.Certificate) {
		switch {
		case !tolerate.settingCertificate:
			errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not set certificate content"))
		case len(was.Status.Certificate) > 0:
			errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not modify existing certificate content"))
		}
	}
	return errs
}

// onlyTrueConditions are the condition types whose status may only be
// True.
var onlyTrueConditions = []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed}

// validateCSRConditions: each condition typed, with a known status (only
// True for Approved, Denied and Failed), no type twice (approvedAndDenied
// checks the verdicts together).
func validateCSRConditions(p *field.Path, conditions []certificatesv1.CertificateSigningRequestCondition, tolerate csrTolerance) field.ErrorList {
	var errs field.ErrorList
	seen := map[certificatesv1.RequestConditionType]bool{}
	for i, c := range conditions {
		if c.Type == "" && !tolerate.emptyConditionType {
			errs = append(errs, field.Required(p.Index(i).Child("type"), ""))
		}
		allowed := []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
		if slices.Contains(onlyTrueConditions, c.Type) {
			allowed = []string{string(corev1.ConditionTrue)}
		}
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(p.Index(i).Child("status"), ""))
		case !slices.Contains(allowed, string(c.Status)):
			errs = append(errs, field.NotSupported(p.Index(i).Child("status"), c.Status, allowed))
		}
		if seen[c.Type] && !tolerate.duplicateConditionTypes {
			errs = append(errs, field.Duplicate(p.Index(i).Child("type"), c.Type))
		}
		seen[c.Type] = true
	}
	return errs
}

// validateConditionChanges: no update removes an Approved, Denied or
// Failed condition, and only the approval subresource adds or changes
// the Approved and Denied ones.
func validateConditionChanges(csr, was *certificatesv1.CertificateSigningRequest, tolerate csrTolerance) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status", "conditions")
	for _, t := range onlyTrueConditions {
		if len(conditionsOf(csr, t)) < len(conditionsOf(was, t)) {
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if tolerate.settingApprovalConditions {
		return errs
	}
	for _, t := range onlyTrueConditions[:2] {
		now, before := conditionsOf(csr, t), conditionsOf(was, t)
		switch {
		case len(now) < len(before):
		case len(now) > len(before):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("updates may not add a condition of type %q", t)))
		case !apiequality.Semantic.DeepEqual(before, now):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("updates may not modify a condition of type %q\n%v", t,
				diff.Diff(asUpstreamSpells(before), asUpstreamSpells(now)))))
		}
	}
	return errs
}

// upstreamCondition is a condition as upstream's internal type has it:
// every field, under its Go name, as its "may not modify" message shows
// them.
type upstreamCondition struct {
	Type                               certificatesv1.RequestConditionType
	Status                             corev1.ConditionStatus
	Reason, Message                    string
	LastUpdateTime, LastTransitionTime metav1.Time
}

func asUpstreamSpells(cs []certificatesv1.CertificateSigningRequestCondition) []upstreamCondition {
	out := make([]upstreamCondition, 0, len(cs))
	for _, c := range cs {
		out = append(out, upstreamCondition{c.Type, c.Status, c.Reason, c.Message, c.LastUpdateTime, c.LastTransitionTime})
	}
	return out
}

func conditionsOf(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}

// checkIssuedCertificate: empty, or PEM CERTIFICATE blocks only, without
// headers, each holding at least one certificate.
func checkIssuedCertificate(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}
