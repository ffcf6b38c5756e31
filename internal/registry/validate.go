package registry

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// NameValidator checks an object name (or a generateName prefix).
type NameValidator = func(name string, prefix bool) []string

// ValidateNew checks an object about to be created: metadata first, then
// the kind's own rules.
func (r *Resource) ValidateNew(obj runtime.Object) field.ErrorList {
	errs := ValidateObjectMeta(obj, r.Namespaced, r.nameValidator())
	if r.Strategy.Validate != nil {
		errs = append(errs, r.Strategy.Validate(obj)...)
	}
	return errs
}

// ValidateChange checks an update of old into obj.
func (r *Resource) ValidateChange(obj, old runtime.Object) field.ErrorList {
	errs := ValidateObjectMetaUpdate(obj, old)
	if r.Strategy.ValidateUpdate != nil {
		errs = append(errs, r.Strategy.ValidateUpdate(obj, old)...)
	}
	return errs
}

// nameValidator returns the name rule of the resource's kind.
func (r *Resource) nameValidator() NameValidator {
	if r.NameValidator != nil {
		return r.NameValidator
	}
	return NameRule(r.GroupVersionKind().GroupKind())
}
