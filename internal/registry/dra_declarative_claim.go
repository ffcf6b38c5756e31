package registry

import (
	"context"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The declarative rules of claims, claim templates and claim status.

// declareClaim: the spec may not change; a new one is checked; then the
// status.
func declareClaim(op operation.Operation, c, old *resourcev1.ResourceClaim) field.ErrorList {
	var errs field.ErrorList
	oldSpec := oldField(old, func(o *resourcev1.ResourceClaim) *resourcev1.ResourceClaimSpec { return &o.Spec })
	if !sameOnUpdate(op, old != nil, &c.Spec, oldSpec) {
		if imm := validate.Immutable(dvCtx, op, specPath, &c.Spec, oldSpec); len(imm) > 0 {
			errs = beta(imm).MarkShortCircuit()
		} else {
			errs = declareClaimSpec(op, specPath, &c.Spec, oldSpec)
		}
	}
	oldStatus := oldField(old, func(o *resourcev1.ResourceClaim) *resourcev1.ResourceClaimStatus { return &o.Status })
	if sameOnUpdate(op, old != nil, &c.Status, oldStatus) {
		return errs
	}
	return append(errs, declareClaimStatus(op, &c.Status, oldStatus)...)
}

func declareClaimTemplate(op operation.Operation, t, old *resourcev1.ResourceClaimTemplate) field.ErrorList {
	oldSpec := oldField(old, func(o *resourcev1.ResourceClaimTemplate) *resourcev1.ResourceClaimTemplateSpec { return &o.Spec })
	if sameOnUpdate(op, old != nil, &t.Spec, oldSpec) {
		return nil
	}
	oldClaim := oldField(oldSpec, func(o *resourcev1.ResourceClaimTemplateSpec) *resourcev1.ResourceClaimSpec { return &o.Spec })
	if sameOnUpdate(op, old != nil, &t.Spec.Spec, oldClaim) {
		return nil
	}
	return declareClaimSpec(op, specPath.Child("spec"), &t.Spec.Spec, oldClaim)
}

var requestsRule = list[resourcev1.DeviceRequest]{mark: beta, max: 32,
	key: func(a, b *resourcev1.DeviceRequest) bool { return a.Name == b.Name }, each: declareRequest}

func declareClaimSpec(op operation.Operation, p *field.Path, s, old *resourcev1.ResourceClaimSpec) field.ErrorList {
	oldDevices := oldField(old, func(o *resourcev1.ResourceClaimSpec) *resourcev1.DeviceClaim { return &o.Devices })
	if sameOnUpdate(op, old != nil, &s.Devices, oldDevices) {
		return nil
	}
	d, p, correlated := &s.Devices, p.Child("devices"), oldDevices != nil
	errs := requestsRule.check(op, p.Child("requests"), d.Requests,
		oldSlice(oldDevices, func(o *resourcev1.DeviceClaim) []resourcev1.DeviceRequest { return o.Requests }), correlated)
	errs = append(errs, list[resourcev1.DeviceConstraint]{mark: beta, max: 32, each: declareConstraint}.check(op, p.Child("constraints"),
		d.Constraints, oldSlice(oldDevices, func(o *resourcev1.DeviceClaim) []resourcev1.DeviceConstraint { return o.Constraints }), correlated)...)
	return append(errs, list[resourcev1.DeviceClaimConfiguration]{mark: beta, max: 32, each: declareClaimConfiguration}.check(op,
		p.Child("config"), d.Config, oldSlice(oldDevices, func(o *resourcev1.DeviceClaim) []resourcev1.DeviceClaimConfiguration { return o.Config }), correlated)...)
}

var refsRule = list[string]{mark: beta, max: 32, set: true}

func declareConstraint(_ context.Context, op operation.Operation, p *field.Path, c, old *resourcev1.DeviceConstraint) field.ErrorList {
	correlated := old != nil
	errs := refsRule.check(op, p.Child("requests"), c.Requests, oldSlice(old, func(o *resourcev1.DeviceConstraint) []string { return o.Requests }), correlated)
	var oldMatch, oldDistinct *resourcev1.FullyQualifiedName
	if old != nil {
		oldMatch, oldDistinct = old.MatchAttribute, old.DistinctAttribute
	}
	errs = append(errs, pointer(op, p.Child("matchAttribute"), c.MatchAttribute, oldMatch, correlated, beta,
		validate.ResourceFullyQualifiedName[resourcev1.FullyQualifiedName])...)
	return append(errs, pointer(op, p.Child("distinctAttribute"), c.DistinctAttribute, oldDistinct, correlated, beta,
		validate.ResourceFullyQualifiedName[resourcev1.FullyQualifiedName])...)
}

func declareClaimConfiguration(_ context.Context, op operation.Operation, p *field.Path, c, old *resourcev1.DeviceClaimConfiguration) field.ErrorList {
	errs := refsRule.check(op, p.Child("requests"), c.Requests, oldSlice(old, func(o *resourcev1.DeviceClaimConfiguration) []string { return o.Requests }), old != nil)
	oldConf := oldField(old, func(o *resourcev1.DeviceClaimConfiguration) *resourcev1.DeviceConfiguration {
		return &o.DeviceConfiguration
	})
	if sameOnUpdate(op, old != nil, &c.DeviceConfiguration, oldConf) {
		return errs
	}
	return append(errs, declareConfiguration(op, p, &c.DeviceConfiguration, oldConf)...)
}

var subRequestsRule = list[resourcev1.DeviceSubRequest]{mark: beta, max: 8,
	key: func(a, b *resourcev1.DeviceSubRequest) bool { return a.Name == b.Name }, each: declareSubRequest}

func declareRequest(_ context.Context, op operation.Operation, p *field.Path, r, old *resourcev1.DeviceRequest) field.ErrorList {
	var errs field.ErrorList
	var oldExact *resourcev1.ExactDeviceRequest
	if old != nil {
		oldExact = old.Exactly
	}
	if !sameOnUpdate(op, old != nil, r.Exactly, oldExact) && r.Exactly != nil {
		errs = declareExact(op, p.Child("exactly"), r.Exactly, oldExact)
	}
	return append(errs, subRequestsRule.check(op, p.Child("firstAvailable"), r.FirstAvailable,
		oldSlice(old, func(o *resourcev1.DeviceRequest) []resourcev1.DeviceSubRequest { return o.FirstAvailable }), old != nil)...)
}

// requestRules are the rules an exact request and a subrequest share:
// selectors, allocation mode, tolerations and derived attributes.
func requestRules(op operation.Operation, p *field.Path, sel, oldSel []resourcev1.DeviceSelector, mode, oldMode *resourcev1.DeviceAllocationMode,
	tols, oldTols []resourcev1.DeviceToleration, attrs, oldAttrs []resourcev1.DeviceDerivedAttribute, correlated bool) field.ErrorList {
	errs := list[resourcev1.DeviceSelector]{mark: beta, max: 32}.check(op, p.Child("selectors"), sel, oldSel, correlated)
	errs = append(errs, value(op, p.Child("allocationMode"), mode, oldMode, false, beta, modeEnum)...)
	errs = append(errs, list[resourcev1.DeviceToleration]{mark: beta, each: declareToleration}.check(op, p.Child("tolerations"), tols, oldTols, correlated)...)
	return append(errs, list[resourcev1.DeviceDerivedAttribute]{mark: standard, max: 32, each: declareDerivedAttribute}.check(op,
		p.Child("derivedAttributes"), attrs, oldAttrs, correlated)...)
}

func declareExact(op operation.Operation, p *field.Path, r, old *resourcev1.ExactDeviceRequest) field.ErrorList {
	var o resourcev1.ExactDeviceRequest
	if old != nil {
		o = *old
	}
	var oldMode *resourcev1.DeviceAllocationMode
	if old != nil {
		oldMode = &old.AllocationMode
	}
	return requestRules(op, p, r.Selectors, o.Selectors, &r.AllocationMode, oldMode, r.Tolerations, o.Tolerations,
		r.DerivedAttributes, o.DerivedAttributes, old != nil)
}

func declareSubRequest(_ context.Context, op operation.Operation, p *field.Path, r, old *resourcev1.DeviceSubRequest) field.ErrorList {
	var o resourcev1.DeviceSubRequest
	var oldClass *string
	var oldMode *resourcev1.DeviceAllocationMode
	if old != nil {
		o, oldClass, oldMode = *old, &old.DeviceClassName, &old.AllocationMode
	}
	errs := value(op, p.Child("deviceClassName"), &r.DeviceClassName, oldClass, true, beta, validate.LongName[string])
	return append(errs, requestRules(op, p, r.Selectors, o.Selectors, &r.AllocationMode, oldMode, r.Tolerations, o.Tolerations,
		r.DerivedAttributes, o.DerivedAttributes, old != nil)...)
}

func declareDerivedAttribute(_ context.Context, op operation.Operation, p *field.Path, a, old *resourcev1.DeviceDerivedAttribute) field.ErrorList {
	var oldName *resourcev1.FullyQualifiedName
	var oldExpr *string
	if old != nil {
		oldName, oldExpr = &old.Name, &old.Expression
	}
	errs := value(op, p.Child("name"), &a.Name, oldName, true, standard, validate.ResourceFullyQualifiedName[resourcev1.FullyQualifiedName])
	return append(errs, value(op, p.Child("expression"), &a.Expression, oldExpr, true, standard)...)
}
