package registry

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var metadataPath = field.NewPath("metadata")

// nameRules maps the built-in kinds to their descriptors' name rules.
var nameRules = sync.OnceValue(func() map[schema.GroupKind]NameValidator {
	out := map[schema.GroupKind]NameValidator{}
	for _, d := range builtinDescriptors() {
		if d.name != nil {
			out[d.groupKind()] = d.name
		}
	}
	return out
})

// NameRule returns the rule metadata.name of a built-in kind must follow (for
// example a DNS-1035 label for Services, a DNS label for Namespaces and
// StatefulSets). Kinds without a specific rule get the path-segment rule every
// resource must satisfy (RBAC kinds hold a generateName prefix to it too);
// custom resources use DNS subdomains upstream and are not covered here.
func NameRule(gk schema.GroupKind) apivalidation.ValidateNameFunc {
	if fn, ok := nameRules()[gk]; ok {
		return fn
	}
	return pathSegmentName
}

// pathSegmentName is the rule every name must meet to be used in a URL.
func pathSegmentName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}

// ValidateObjectMeta validates the metadata of a new object: nameFn checks
// name and generateName (nil means the path-segment rule), namespaced says
// whether metadata.namespace is required or forbidden. Built-in kinds also get
// the core rule that unqualified finalizer names must be standard ones.
func ValidateObjectMeta(obj runtime.Object, namespaced bool, nameFn apivalidation.ValidateNameFunc) field.ErrorList {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(metadataPath, err)}
	}
	if nameFn == nil {
		nameFn = pathSegmentName
	}
	errs := apivalidation.ValidateObjectMetaAccessor(accessor, namespaced, nameFn, metadataPath)
	if usesCoreMetaRules(obj) {
		errs = append(errs, kubeFinalizerNames(accessor.GetFinalizers(), metadataPath.Child("finalizers"))...)
	}
	return errs
}

// ValidateObjectMetaUpdate validates the metadata of an update: name,
// namespace, uid, creationTimestamp and the deletion fields are immutable,
// resourceVersion is required and generation may not decrease.
func ValidateObjectMetaUpdate(obj, old runtime.Object) field.ErrorList {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(metadataPath, err)}
	}
	oldAccessor, err := meta.Accessor(old)
	if err != nil {
		return field.ErrorList{field.InternalError(metadataPath, err)}
	}
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(accessor, oldAccessor, metadataPath)
	if usesCoreMetaRules(obj) {
		errs = append(errs, kubeFinalizerNames(accessor.GetFinalizers(), metadataPath.Child("finalizers"))...)
	}
	return errs
}

// usesCoreMetaRules reports whether upstream validates the object's metadata
// with the core helper (which adds the finalizer-name rule): every typed
// built-in object except the admissionregistration, apiextensions,
// apiregistration, coordination and node groups (whose validation uses
// apimachinery's helper).
func usesCoreMetaRules(obj runtime.Object) bool {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return false
	}
	kinds, _, err := Scheme().ObjectKinds(obj)
	if err != nil || len(kinds) == 0 {
		return false
	}
	switch kinds[0].Group {
	case "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "coordination.k8s.io", "node.k8s.io":
		return false
	}
	return true
}

// standardFinalizers are the finalizer names allowed without a domain.
var standardFinalizers = map[string]bool{
	"kubernetes":         true,
	"orphan":             true,
	"foregroundDeletion": true,
}

// kubeFinalizerNames rejects unqualified finalizer names that are not
// standard ones.
func kubeFinalizerNames(finalizers []string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, f := range finalizers {
		if !strings.Contains(f, "/") && !standardFinalizers[f] {
			errs = append(errs, field.Invalid(fldPath.Index(i), f, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}

// commonObjectMeta is k8s.io/apiserver's own metadata check of every write:
// the path-segment name rule and no core finalizer rule.
func commonObjectMeta(obj runtime.Object, namespaced bool) field.ErrorList {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(metadataPath, err)}
	}
	return apivalidation.ValidateObjectMetaAccessor(accessor, namespaced, pathSegmentName, metadataPath)
}

// commonObjectMetaUpdate is k8s.io/apiserver's own check of a metadata
// change, without the core finalizer rule.
func commonObjectMetaUpdate(obj, old runtime.Object) field.ErrorList {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(metadataPath, err)}
	}
	oldAccessor, err := meta.Accessor(old)
	if err != nil {
		return field.ErrorList{field.InternalError(metadataPath, err)}
	}
	return apivalidation.ValidateObjectMetaAccessorUpdate(accessor, oldAccessor, metadataPath)
}

// commonObjectMetaBeyondUpdate are the errors of k8s.io/apiserver's own
// check of the new metadata on update (rest.ValidateUpdate runs
// commonObjectMeta before the kind's rules) that ValidateObjectMetaUpdate
// does not report already: what an update of a kind whose rules do not
// check the new metadata whole gets besides (a malformed finalizer, for
// one), for kinds under declarative validation, which drops repeated
// messages.
func commonObjectMetaBeyondUpdate(obj, old runtime.Object, namespaced bool) field.ErrorList {
	reported := map[string]bool{}
	for _, e := range ValidateObjectMetaUpdate(obj, old) {
		reported[e.Error()] = true
	}
	var out field.ErrorList
	for _, e := range commonObjectMeta(obj, namespaced) {
		if !reported[e.Error()] {
			out = append(out, e)
		}
	}
	return out
}
