package registry

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ControllerRevision validation, as kube-apiserver 1.37's
// ValidateControllerRevisionCreate and ValidateControllerRevisionUpdate: a
// revision is not negative, its data is a JSON object and never changes.

var controllerRevisionDataPath = field.NewPath("data")

func validateControllerRevision(obj runtime.Object) field.ErrorList {
	cr := obj.(*appsv1.ControllerRevision)
	errs := apivalidation.ValidateNonnegativeField(cr.Revision, field.NewPath("revision"))
	return uniqueMessages(append(errs, validateControllerRevisionData(cr.Data.Raw)...))
}

// validateControllerRevisionData: data as sent (decoding keeps it raw)
// must be a JSON object; null counts as missing.
func validateControllerRevisionData(raw []byte) field.ErrorList {
	if raw == nil {
		return field.ErrorList{field.Required(controllerRevisionDataPath, "data is mandatory")}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return field.ErrorList{field.Invalid(controllerRevisionDataPath, "<value omitted>", fmt.Sprintf("error parsing data: %v", err.Error()))}
	}
	if v == nil {
		return field.ErrorList{field.Required(controllerRevisionDataPath, "data is mandatory")}
	}
	if _, ok := v.(map[string]any); !ok {
		return field.ErrorList{field.Required(controllerRevisionDataPath, "data must be a valid JSON object")}
	}
	return nil
}

// validateControllerRevisionUpdate checks the new object's metadata and
// revision again; its data may not change.
func validateControllerRevisionUpdate(obj, old runtime.Object) field.ErrorList {
	cr, was := obj.(*appsv1.ControllerRevision), old.(*appsv1.ControllerRevision)
	errs := ValidateObjectMeta(obj, true, apivalidation.NameIsDNSSubdomain)
	errs = append(errs, apivalidation.ValidateNonnegativeField(cr.Revision, field.NewPath("revision"))...)
	return uniqueMessages(append(errs, apivalidation.ValidateImmutableField(cr.Data, was.Data, controllerRevisionDataPath)...))
}
