package registry

import (
	"reflect"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// VolumeAttributesClass's strategy, as upstream's
// pkg/registry/storage/volumeattributesclass: no defaults or preparation;
// a driver name (a qualified name once lower-cased) and at least one
// parameter are required, and neither may change. An update is checked
// as a whole too.

var (
	driverNameFld = field.NewPath("driverName")
	parametersFld = field.NewPath("parameters")
)

// Parameter limits of classes (upstream's pkg/apis/storage/validation).
const (
	maxParameterSize  = 256 << 10
	maxParameterCount = 512
)

func volumeAttributesClassStrategy() Strategy {
	return Strategy{
		Validate: func(obj runtime.Object) field.ErrorList {
			return uniqueMessages(validateVolumeAttributesClass(obj.(*storagev1.VolumeAttributesClass)))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			c, was := obj.(*storagev1.VolumeAttributesClass), old.(*storagev1.VolumeAttributesClass)
			var errs field.ErrorList
			if c.DriverName != was.DriverName {
				errs = append(errs, field.Forbidden(driverNameFld, "updates to driverName are forbidden."))
			}
			// Upstream compares with reflect: no parameters and an empty
			// map differ.
			if !reflect.DeepEqual(was.Parameters, c.Parameters) {
				errs = append(errs, field.Forbidden(parametersFld, "updates to parameters are forbidden."))
			}
			errs = append(errs, ValidateObjectMeta(c, false, apivalidation.NameIsDNSSubdomain)...)
			return uniqueMessages(append(errs, validateVolumeAttributesClass(c)...))
		},
	}
}

func validateVolumeAttributesClass(c *storagev1.VolumeAttributesClass) field.ErrorList {
	var errs field.ErrorList
	if c.DriverName == "" {
		errs = append(errs, field.Required(driverNameFld, ""))
	} else {
		lower := strings.ToLower(c.DriverName)
		for _, msg := range validation.IsQualifiedName(lower) {
			errs = append(errs, field.Invalid(driverNameFld, lower, msg))
		}
	}
	return append(errs, validateClassParameters(c.Parameters, false)...)
}

// validateClassParameters: up to 512 parameters (at least one unless
// allowEmpty), no empty key, 256 KiB of keys and values in all.
func validateClassParameters(params map[string]string, allowEmpty bool) field.ErrorList {
	if len(params) > maxParameterCount {
		return field.ErrorList{field.TooLong(parametersFld, "", maxParameterCount)}
	}
	var errs field.ErrorList
	size := 0
	for k, v := range params {
		if k == "" {
			errs = append(errs, field.Invalid(parametersFld, k, "field can not be empty."))
		}
		size += len(k) + len(v)
	}
	if size > maxParameterSize {
		errs = append(errs, field.TooLong(parametersFld, "", maxParameterSize))
	}
	if !allowEmpty && len(params) == 0 {
		errs = append(errs, field.Required(parametersFld, "must contain at least one key/value pair"))
	}
	return errs
}
