package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// LimitRange validation, as kube-apiserver 1.37's ValidateLimitRange, which
// its strategy runs on create and, whole again, on update.

var limitRangeTypes = sets.New(corev1.LimitTypePod, corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim)

// prepareLimitRangeForCreate names a LimitRange created without a name (or
// generateName) with a UUID, as upstream's strategy does.
func prepareLimitRangeForCreate(obj runtime.Object) {
	lr := obj.(*corev1.LimitRange)
	if lr.Name == "" {
		lr.Name = string(uuid.NewUUID())
	}
}

func validateLimitRange(obj runtime.Object) field.ErrorList {
	lr := obj.(*corev1.LimitRange)
	var errs field.ErrorList
	seen := sets.New[corev1.LimitType]()
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		p := field.NewPath("spec", "limits").Index(i)
		errs = append(errs, validateLimitTypeName(item.Type, p.Child("type"))...)
		if seen.Has(item.Type) {
			errs = append(errs, field.Duplicate(p.Child("type"), item.Type))
		}
		seen.Insert(item.Type)
		errs = append(errs, validateLimitRangeItem(item, p)...)
	}
	return uniqueMessages(errs)
}

// validateLimitRangeUpdate checks the new object whole, metadata included.
func validateLimitRangeUpdate(obj, _ runtime.Object) field.ErrorList {
	errs := ValidateObjectMeta(obj, true, apivalidation.NameIsDNSSubdomain)
	return uniqueMessages(append(errs, validateLimitRange(obj)...))
}

func validateLimitTypeName(t corev1.LimitType, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(t)) {
		errs = append(errs, field.Invalid(p, t, msg))
	}
	if len(errs) == 0 && !strings.Contains(string(t), "/") && !limitRangeTypes.Has(t) {
		errs = append(errs, field.Invalid(p, t, "must be a standard limit type or fully qualified"))
	}
	return errs
}

// limitNameRule is the resource-name rule of a limit of type t: container
// resources for Pods and Containers, any resource for the others.
func limitNameRule(t corev1.LimitType) func(corev1.ResourceName, *field.Path) field.ErrorList {
	if t == corev1.LimitTypePod || t == corev1.LimitTypeContainer {
		return validateContainerResourceName
	}
	return validateResourceName
}

// limitBounds are one resource's bounds in a limit, and which are set.
type limitBounds struct {
	min, max, def, defReq, ratio                resource.Quantity
	hasMin, hasMax, hasDef, hasDefReq, hasRatio bool
}

// validateLimitRangeItem checks the names in each list (map order, as
// upstream), then each resource's bounds against each other.
func validateLimitRangeItem(item *corev1.LimitRangeItem, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	nameRule := limitNameRule(item.Type)
	bounds := map[corev1.ResourceName]*limitBounds{}
	collect := func(list corev1.ResourceList, child string, set func(b *limitBounds, q resource.Quantity)) {
		for name, q := range list {
			errs = append(errs, nameRule(name, p.Child(child).Key(string(name)))...)
			if bounds[name] == nil {
				bounds[name] = &limitBounds{}
			}
			set(bounds[name], q)
		}
	}
	collect(item.Max, "max", func(b *limitBounds, q resource.Quantity) { b.max, b.hasMax = q, true })
	collect(item.Min, "min", func(b *limitBounds, q resource.Quantity) { b.min, b.hasMin = q, true })
	if item.Type == corev1.LimitTypePod {
		if len(item.Default) > 0 {
			errs = append(errs, field.Forbidden(p.Child("default"), "may not be specified when `type` is 'Pod'"))
		}
		if len(item.DefaultRequest) > 0 {
			errs = append(errs, field.Forbidden(p.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
		}
	} else {
		collect(item.Default, "default", func(b *limitBounds, q resource.Quantity) { b.def, b.hasDef = q, true })
		collect(item.DefaultRequest, "defaultRequest", func(b *limitBounds, q resource.Quantity) { b.defReq, b.hasDefReq = q, true })
	}
	if item.Type == corev1.LimitTypePersistentVolumeClaim {
		_, hasMin := item.Min[corev1.ResourceStorage]
		_, hasMax := item.Max[corev1.ResourceStorage]
		if !hasMin && !hasMax {
			errs = append(errs, field.Required(p.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
		}
	}
	collect(item.MaxLimitRequestRatio, "maxLimitRequestRatio", func(b *limitBounds, q resource.Quantity) { b.ratio, b.hasRatio = q, true })
	for name, b := range bounds {
		errs = append(errs, b.validate(name, p)...)
	}
	return errs
}

// validate relates one resource's bounds: min <= defaultRequest <= default
// <= max, a ratio of at least 1 and at most max/min, and default equal to
// defaultRequest for resources that may not be overcommitted.
func (b *limitBounds) validate(name corev1.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	key := string(name)
	if b.hasMin && b.hasMax && b.min.Cmp(b.max) > 0 {
		errs = append(errs, field.Invalid(p.Child("min").Key(key), b.min, fmt.Sprintf("min value %s is greater than max value %s", b.min.String(), b.max.String())))
	}
	if b.hasDefReq && b.hasMin && b.min.Cmp(b.defReq) > 0 {
		errs = append(errs, field.Invalid(p.Child("defaultRequest").Key(key), b.defReq, fmt.Sprintf("min value %s is greater than default request value %s", b.min.String(), b.defReq.String())))
	}
	if b.hasDefReq && b.hasMax && b.defReq.Cmp(b.max) > 0 {
		errs = append(errs, field.Invalid(p.Child("defaultRequest").Key(key), b.defReq, fmt.Sprintf("default request value %s is greater than max value %s", b.defReq.String(), b.max.String())))
	}
	if b.hasDefReq && b.hasDef && b.defReq.Cmp(b.def) > 0 {
		errs = append(errs, field.Invalid(p.Child("defaultRequest").Key(key), b.defReq, fmt.Sprintf("default request value %s is greater than default limit value %s", b.defReq.String(), b.def.String())))
	}
	if b.hasDef && b.hasMin && b.min.Cmp(b.def) > 0 {
		errs = append(errs, field.Invalid(p.Child("default").Key(key), b.min, fmt.Sprintf("min value %s is greater than default value %s", b.min.String(), b.def.String())))
	}
	if b.hasDef && b.hasMax && b.def.Cmp(b.max) > 0 {
		errs = append(errs, field.Invalid(p.Child("default").Key(key), b.max, fmt.Sprintf("default value %s is greater than max value %s", b.def.String(), b.max.String())))
	}
	errs = append(errs, b.validateRatio(p.Child("maxLimitRequestRatio").Key(key))...)
	if !isOvercommitAllowed(name) && b.hasDef && b.hasDefReq && b.def.Cmp(b.defReq) != 0 {
		errs = append(errs, field.Invalid(p.Child("defaultRequest").Key(key), b.defReq, fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", b.def.String(), b.defReq.String(), key)))
	}
	return errs
}

// validateRatio compares the ratio with max/min in thousandths when all
// three are small enough for it, else in whole units, as upstream.
func (b *limitBounds) validateRatio(p *field.Path) field.ErrorList {
	if !b.hasRatio {
		return nil
	}
	var errs field.ErrorList
	if b.ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
		errs = append(errs, field.Invalid(p, b.ratio, fmt.Sprintf("ratio %s is less than 1", b.ratio.String())))
	}
	if !b.hasMin || !b.hasMax {
		return errs
	}
	ratio, lo, hi := float64(b.ratio.Value()), b.min.Value(), b.max.Value()
	if b.ratio.Value() < resource.MaxMilliValue && lo < resource.MaxMilliValue && hi < resource.MaxMilliValue {
		ratio, lo, hi = float64(b.ratio.MilliValue())/1000, b.min.MilliValue(), b.max.MilliValue()
	}
	if limit := float64(hi) / float64(lo); ratio > limit {
		errs = append(errs, field.Invalid(p, b.ratio, fmt.Sprintf("ratio %s is greater than max/min = %f", b.ratio.String(), limit)))
	}
	return errs
}
