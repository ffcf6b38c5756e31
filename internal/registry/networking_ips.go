package registry

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// ServiceCIDR and IPAddress, the objects Service cluster IPs are allocated
// from and as (upstream's pkg/registry/networking/{servicecidr,ipaddress}
// and pkg/apis/networking/validation).
//
// A ServiceCIDR holds one or two CIDRs, one per IP family; a create starts
// from an empty status and a write of the main resource keeps the stored
// one (1.37's ServiceCIDRStatusFieldWiping); the CIDRs never change, but a
// single-stack one may gain the other family's. Its status is written
// through /status, which keeps the spec and the metadata a status
// strategy resets.
//
// An IPAddress is named by its address in canonical form and refers to
// the object holding it (spec.parentRef, immutable). A generateName is
// taken as the name itself. 1.37 enforces beta declarative rules of the
// kind, which replace the handwritten errors they repeat (those come last
// then): parentRef, and on create its resource and name, are required; a
// parentRef change is "spec.parentRef: Invalid value: null: field is
// immutable", and a changed parentRef is not checked further by them.

var parentRefPath = specPath.Child("parentRef")

func serviceCIDRStrategy() Strategy {
	cidrs := specPath.Child("cidrs")
	return Strategy{
		ResetStatusMetadata: resetStatusMetadataAll,
		Validate: func(obj runtime.Object) field.ErrorList {
			return validateServiceCIDRs(obj.(*networkingv1.ServiceCIDR).Spec.CIDRs, cidrs)
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			return validateServiceCIDRChange(obj.(*networkingv1.ServiceCIDR).Spec.CIDRs, old.(*networkingv1.ServiceCIDR).Spec.CIDRs, cidrs)
		},
	}
}

// internalServiceCIDRSpec is how upstream's message shows a whole spec:
// its internal type, whose field has no JSON name.
type internalServiceCIDRSpec struct {
	CIDRs []string
}

// validateServiceCIDRs: one or two valid CIDRs, not of one family.
func validateServiceCIDRs(cidrs []string, p *field.Path) field.ErrorList {
	switch {
	case len(cidrs) == 0:
		return field.ErrorList{field.Required(p, "at least one CIDR required")}
	case len(cidrs) > 2:
		return field.ErrorList{field.Invalid(p, &internalServiceCIDRSpec{CIDRs: cidrs}, "may only hold up to 2 values")}
	}
	var errs field.ErrorList
	for i, cidr := range cidrs {
		errs = append(errs, validation.IsValidCIDR(p.Index(i), cidr)...)
	}
	if len(cidrs) == 2 {
		family := netutils.IPFamilyOfCIDRString(cidrs[0])
		if family == netutils.IPFamilyOfCIDRString(cidrs[1]) && family != netutils.IPFamilyUnknown {
			errs = append(errs, field.Invalid(p, cidrs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
	}
	return errs
}

// validateServiceCIDRChange: the CIDRs stay, but one may be added to a
// single one (then checked as a whole).
func validateServiceCIDRChange(cidrs, old []string, p *field.Path) field.ErrorList {
	switch {
	case len(cidrs) == len(old):
		var errs field.ErrorList
		for i := range old {
			if cidrs[i] != old[i] {
				errs = append(errs, field.Invalid(p.Index(i), cidrs[i], apivalidation.FieldImmutableErrorMsg))
			}
		}
		return errs
	case len(old) == 1 && len(cidrs) == 2:
		var errs field.ErrorList
		if cidrs[0] != old[0] {
			errs = append(errs, field.Invalid(p.Index(0), cidrs[0], apivalidation.FieldImmutableErrorMsg))
		}
		return append(errs, validateServiceCIDRs(cidrs, p)...)
	}
	return field.ErrorList{field.Invalid(p, cidrs, apivalidation.FieldImmutableErrorMsg)}
}

func ipAddressStrategy() Strategy {
	return Strategy{
		GenerateName: func(base string) string { return base },
		Validate: func(obj runtime.Object) field.ErrorList {
			ref := obj.(*networkingv1.IPAddress).Spec.ParentRef
			return withEnforcedDeclarative(validateParentRef(ref), declarativeParentRef(ref, nil, false))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			ip, was := obj.(*networkingv1.IPAddress), old.(*networkingv1.IPAddress)
			errs := ValidateObjectMeta(ip, false, ipAddressName)
			errs = append(errs, validateParentRef(ip.Spec.ParentRef)...)
			errs = append(errs, apivalidation.ValidateImmutableField(ip.Spec.ParentRef, was.Spec.ParentRef, parentRefPath).
				MarkCoveredByDeclarative().WithOrigin("immutable")...)
			return uniqueMessages(withEnforcedDeclarative(errs, declarativeParentRef(ip.Spec.ParentRef, was.Spec.ParentRef, true)))
		},
	}
}

// ipAddressName: the name is an IP address in canonical form.
func ipAddressName(name string, _ bool) []string {
	var out []string
	for _, e := range validation.IsValidIP(&field.Path{}, name) {
		out = append(out, e.Detail)
	}
	return out
}

// validateParentRef is the handwritten check of a parent reference; the
// required errors are repeated by declarative rules.
func validateParentRef(ref *networkingv1.ParentReference) field.ErrorList {
	if ref == nil {
		return field.ErrorList{field.Required(parentRefPath, "").MarkCoveredByDeclarative()}
	}
	var errs field.ErrorList
	if ref.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(ref.Group) {
			errs = append(errs, field.Invalid(parentRefPath.Child("group"), ref.Group, msg))
		}
	}
	segment := func(name, value string, required bool) {
		switch {
		case value == "" && required:
			errs = append(errs, field.Required(parentRefPath.Child(name), "").MarkCoveredByDeclarative())
		case value != "":
			for _, msg := range content.IsPathSegmentName(value) {
				errs = append(errs, field.Invalid(parentRefPath.Child(name), value, msg))
			}
		}
	}
	segment("resource", ref.Resource, true)
	segment("name", ref.Name, true)
	segment("namespace", ref.Namespace, false)
	return errs
}

// declarativeParentRef are the errors of the beta declarative rules of
// spec.parentRef (old and update for an update): required; immutable,
// which on an update that changes it stops the checks of its fields;
// those fields' resource and name required.
func declarativeParentRef(ref, old *networkingv1.ParentReference, update bool) field.ErrorList {
	ctx, op := context.Background(), operation.Operation{Type: operation.Create}
	if update {
		if ref == old || (ref != nil && old != nil && *ref == *old) {
			return nil
		}
		op.Type = operation.Update
	}
	errs := validate.RequiredPointer(ctx, op, parentRefPath, ref, old)
	errs = append(errs, validate.Immutable(ctx, op, parentRefPath, ref, old)...)
	if len(errs) == 0 {
		errs = append(errs, validate.RequiredValue(ctx, op, parentRefPath.Child("resource"), &ref.Resource, nil)...)
		errs = append(errs, validate.RequiredValue(ctx, op, parentRefPath.Child("name"), &ref.Name, nil)...)
	}
	return errs.MarkBeta()
}

// withEnforcedDeclarative is what kube-apiserver makes of handwritten
// errors and enforced declarative ones (of any kind whose strategy runs
// declarative validation, networking's, Node's, RuntimeClass's, Lease's):
// the handwritten less those a beta declarative one covers and less any
// repeating an earlier message, then the declarative.
func withEnforcedDeclarative(handwritten, declarative field.ErrorList) field.ErrorList {
	kept := validate.FilterCoveredHandwrittenErrors(context.Background(), handwritten, declarative, true)
	return append(kept, declarative...)
}
