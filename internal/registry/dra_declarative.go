package registry

import (
	"context"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The declarative rules of resource.k8s.io/v1 that kube-apiserver 1.37
// enforces (the API's +k8s: tags, standard and beta; alpha ones only
// shadow the handwritten checks and are left out), run on the v1 objects
// with apimachinery's validators, in the order of the API's fields. On an
// update a field equal to its old value is not checked again; list items
// and map values are compared with their old selves only where the API
// gives them keys. withDeclarative merges their errors with the
// handwritten ones.

var dvCtx = context.Background()

// beta and standard mark a rule's errors.
func beta(errs field.ErrorList) field.ErrorList     { return errs.MarkBeta() }
func standard(errs field.ErrorList) field.ErrorList { return errs }

// sameOnUpdate reports whether an update leaves a field (with an old value to
// compare to) as it was.
func sameOnUpdate(op operation.Operation, correlated bool, v, old any) bool {
	return correlated && op.Type == operation.Update && deepEqual(v, old)
}

// list is the rules of one list field: optional, at most max items (0:
// no limit), items unique by key (listType=map, also how old items are
// found) or by value (set), each item checked by each.
type list[T any] struct {
	mark   func(field.ErrorList) field.ErrorList
	max    int
	key    validate.MatchFunc[*T]
	set    bool
	each   validate.ValidateFunc[*T]
	direct bool // items are found among the old ones by value
}

func (l list[T]) check(op operation.Operation, p *field.Path, v, old []T, correlated bool) field.ErrorList {
	if sameOnUpdate(op, correlated, v, old) || len(v) == 0 {
		return nil
	}
	if l.max > 0 {
		if errs := validate.MaxItems(dvCtx, op, p, v, old, l.max); len(errs) > 0 {
			return l.mark(errs).MarkShortCircuit()
		}
	}
	var errs field.ErrorList
	switch {
	case l.key != nil:
		errs = l.mark(validate.ValSliceUnique(dvCtx, op, p, v, old, l.key))
	case l.set:
		errs = l.mark(validate.ValSliceUnique(dvCtx, op, p, v, old, directEqual[T]))
	}
	if l.each == nil {
		return errs
	}
	match, equiv := l.key, validate.MatchFunc[*T](nil)
	if match != nil {
		equiv = validate.SemanticDeepEqual[*T]
	}
	if l.direct {
		match = directEqual[T]
	}
	return append(errs, validate.EachValSliceVal(dvCtx, op, p, v, old, match, equiv, l.each)...)
}

// directEqual compares comparable items; other item types are never
// compared by value.
func directEqual[T any](a, b *T) bool { return any(*a) == any(*b) }

// value checks a required (or optional) scalar field with mark's rules:
// required says an empty one is an error, else it ends the checks.
func value[T comparable](op operation.Operation, p *field.Path, v, old *T, required bool, mark func(field.ErrorList) field.ErrorList,
	rules ...validate.ValidateFunc[*T]) field.ErrorList {
	if old != nil && op.Type == operation.Update && *v == *old {
		return nil
	}
	var zero T
	if *v == zero {
		if required {
			return mark(validate.RequiredValue(dvCtx, op, p, v, old)).MarkShortCircuit()
		}
		return nil
	}
	var errs field.ErrorList
	for _, r := range rules {
		errs = append(errs, mark(r(dvCtx, op, p, v, old))...)
	}
	return errs
}

// pointer checks an optional pointer field.
func pointer[T comparable](op operation.Operation, p *field.Path, v, old *T, correlated bool, mark func(field.ErrorList) field.ErrorList,
	rules ...validate.ValidateFunc[*T]) field.ErrorList {
	if correlated && op.Type == operation.Update && (v == old || v != nil && old != nil && *v == *old) {
		return nil
	}
	if v == nil {
		return nil
	}
	var errs field.ErrorList
	for _, r := range rules {
		errs = append(errs, mark(r(dvCtx, op, p, v, old))...)
	}
	return errs
}

// oldField is a field of an old object, nil without one.
func oldField[S, F any](old *S, get func(*S) *F) *F {
	if old == nil {
		return nil
	}
	return get(old)
}

func maxLength63[T ~string](ctx context.Context, op operation.Operation, p *field.Path, v, old *T) field.ErrorList {
	return validate.MaxLength(ctx, op, p, v, old, 63)
}

func enumOf[T ~string](symbols ...T) validate.ValidateFunc[*T] {
	s := sets.New(symbols...)
	return func(ctx context.Context, op operation.Operation, p *field.Path, v, old *T) field.ErrorList {
		return validate.Enum(ctx, op, p, v, old, s, nil)
	}
}

var (
	effectEnum   = enumOf(taintEffects...)
	operatorEnum = enumOf(tolerationOperators...)
	modeEnum     = enumOf(resourcev1.DeviceAllocationModeExactCount, resourcev1.DeviceAllocationModeAll)
	sourceEnum   = enumOf(resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass)
	skipEnum     = enumOf(resourcev1.SkipNodeOperationAll, resourcev1.SkipNodeOperationNodePrepareResources,
		resourcev1.SkipNodeOperationNodeUnprepareResources)
)

// declareDeviceClass: the name, then the spec.
func declareDeviceClass(op operation.Operation, c, old *resourcev1.DeviceClass) field.ErrorList {
	var errs field.ErrorList
	oldMeta := oldField(old, func(o *resourcev1.DeviceClass) *metav1.ObjectMeta { return &o.ObjectMeta })
	if !sameOnUpdate(op, old != nil, &c.ObjectMeta, oldMeta) && (oldMeta == nil || op.Type != operation.Update || c.Name != oldMeta.Name) && c.Name != "" {
		errs = beta(validate.LongName(dvCtx, op, metadataPath.Child("name"), &c.Name, nil))
	}
	oldSpec := oldField(old, func(o *resourcev1.DeviceClass) *resourcev1.DeviceClassSpec { return &o.Spec })
	if sameOnUpdate(op, old != nil, &c.Spec, oldSpec) {
		return errs
	}
	s, p := &c.Spec, specPath
	errs = append(errs, list[resourcev1.DeviceSelector]{mark: beta, max: 32}.check(op, p.Child("selectors"), s.Selectors, oldSlice(oldSpec, func(o *resourcev1.DeviceClassSpec) []resourcev1.DeviceSelector { return o.Selectors }), old != nil)...)
	errs = append(errs, list[resourcev1.DeviceClassConfiguration]{mark: beta, max: 32, each: func(_ context.Context, op operation.Operation, p *field.Path, v, old *resourcev1.DeviceClassConfiguration) field.ErrorList {
		return declareConfiguration(op, p, &v.DeviceConfiguration, oldField(old, func(o *resourcev1.DeviceClassConfiguration) *resourcev1.DeviceConfiguration {
			return &o.DeviceConfiguration
		}))
	}}.check(op, p.Child("config"), s.Config, oldSlice(oldSpec, func(o *resourcev1.DeviceClassSpec) []resourcev1.DeviceClassConfiguration { return o.Config }), old != nil)...)
	var oldERN *string
	if oldSpec != nil {
		oldERN = oldSpec.ExtendedResourceName
	}
	return append(errs, pointer(op, p.Child("extendedResourceName"), s.ExtendedResourceName, oldERN, old != nil, beta, validate.ExtendedResourceName[string])...)
}

// oldSlice is a list field of an old object, nil without one.
func oldSlice[S, T any](old *S, get func(*S) []T) []T {
	if old == nil {
		return nil
	}
	return get(old)
}

// declareConfiguration: an opaque configuration's driver.
func declareConfiguration(op operation.Operation, p *field.Path, c, old *resourcev1.DeviceConfiguration) field.ErrorList {
	var oldOpaque *resourcev1.OpaqueDeviceConfiguration
	if old != nil {
		oldOpaque = old.Opaque
	}
	if sameOnUpdate(op, old != nil, c.Opaque, oldOpaque) || c.Opaque == nil {
		return nil
	}
	o := c.Opaque
	var oldDriver *string
	if oldOpaque != nil {
		oldDriver = &oldOpaque.Driver
	}
	return value(op, p.Child("opaque", "driver"), &o.Driver, oldDriver, true, beta, validate.LongNameCaseless[string], maxLength63[string])
}

// declareTaint: a taint's effect is required and known.
func declareTaint(op operation.Operation, p *field.Path, t, old *resourcev1.DeviceTaint) field.ErrorList {
	return value(op, p.Child("effect"), &t.Effect, oldField(old, func(o *resourcev1.DeviceTaint) *resourcev1.DeviceTaintEffect { return &o.Effect }),
		true, beta, effectEnum)
}

func declareTaintFunc(_ context.Context, op operation.Operation, p *field.Path, t, old *resourcev1.DeviceTaint) field.ErrorList {
	return declareTaint(op, p, t, old)
}

// declareToleration: a label key when set, a known operator, a known
// effect when set.
func declareToleration(_ context.Context, op operation.Operation, p *field.Path, t, old *resourcev1.DeviceToleration) field.ErrorList {
	get := func(f func(*resourcev1.DeviceToleration) *string) *string { return oldField(old, f) }
	errs := value(op, p.Child("key"), &t.Key, get(func(o *resourcev1.DeviceToleration) *string { return &o.Key }), false, beta, validate.LabelKey[string])
	errs = append(errs, value(op, p.Child("operator"), &t.Operator,
		oldField(old, func(o *resourcev1.DeviceToleration) *resourcev1.DeviceTolerationOperator { return &o.Operator }), true, beta, operatorEnum)...)
	return append(errs, value(op, p.Child("effect"), &t.Effect,
		oldField(old, func(o *resourcev1.DeviceToleration) *resourcev1.DeviceTaintEffect { return &o.Effect }), false, beta, effectEnum)...)
}

// declareTaintRule: the taint of the spec.
func declareTaintRule(op operation.Operation, r, old *resourcev1.DeviceTaintRule) field.ErrorList {
	oldSpec := oldField(old, func(o *resourcev1.DeviceTaintRule) *resourcev1.DeviceTaintRuleSpec { return &o.Spec })
	if sameOnUpdate(op, old != nil, &r.Spec, oldSpec) {
		return nil
	}
	oldTaint := oldField(oldSpec, func(o *resourcev1.DeviceTaintRuleSpec) *resourcev1.DeviceTaint { return &o.Taint })
	if sameOnUpdate(op, old != nil, &r.Spec.Taint, oldTaint) {
		return nil
	}
	return declareTaint(op, specPath.Child("taint"), &r.Spec.Taint, oldTaint)
}
