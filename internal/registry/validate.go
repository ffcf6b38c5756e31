package registry

import (
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// NameValidator checks an object name (or a generateName prefix).
type NameValidator = apivalidation.ValidateNameFunc

// ValidateNew checks an object about to be created: metadata first, then
// the kind's own rules.
func (r *Resource) ValidateNew(obj runtime.Object) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	errs := apivalidation.ValidateObjectMetaAccessor(m, r.Namespaced, r.nameValidator(), field.NewPath("metadata"))
	if r.Strategy.Validate != nil {
		errs = append(errs, r.Strategy.Validate(obj)...)
	}
	return errs
}

// ValidateChange checks an update of old into obj.
func (r *Resource) ValidateChange(obj, old runtime.Object) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	om, err := meta.Accessor(old)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	errs := apivalidation.ValidateObjectMetaAccessor(m, r.Namespaced, r.nameValidator(), field.NewPath("metadata"))
	errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(m, om, field.NewPath("metadata"))...)
	if r.Strategy.ValidateUpdate != nil {
		errs = append(errs, r.Strategy.ValidateUpdate(obj, old)...)
	}
	return errs
}

// nameValidator returns the name rule of the resource: DNS labels for the
// kinds upstream restricts, DNS subdomains otherwise.
func (r *Resource) nameValidator() NameValidator {
	if r.NameValidator != nil {
		return r.NameValidator
	}
	switch r.GroupVersionKind().GroupKind().String() {
	case "Namespace":
		return apivalidation.ValidateNamespaceName
	case "Service":
		return apivalidation.NameIsDNS1035Label
	}
	return apivalidation.NameIsDNSSubdomain
}
