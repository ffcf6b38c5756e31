package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Resource names and quantities (upstream validateResourceRequirements and
// the core helper predicates it relies on).

var standardContainerResources = sets.New[corev1.ResourceName](corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)

var standardResources = sets.New[corev1.ResourceName](
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceStorage, corev1.ResourceRequestsStorage, corev1.ResourceServicesNodePorts,
	corev1.ResourceServicesLoadBalancers)

const hugePagesPrefix = "hugepages-"

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), hugePagesPrefix)
}

func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), "kubernetes.io/")
}

func isExtendedResource(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), "requests.") {
		return false
	}
	return len(validation.IsQualifiedName("requests."+string(name))) == 0
}

func isOvercommitAllowed(name corev1.ResourceName) bool {
	return isNativeResource(name) && !isHugePages(name)
}

func isStandardResource(name corev1.ResourceName) bool {
	return standardResources.Has(name) || isHugePages(name) || strings.HasPrefix(string(name), "requests."+hugePagesPrefix)
}

func validateResourceName(name corev1.ResourceName, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(string(name), "/") && !isStandardResource(name) {
		errs = append(errs, field.Invalid(path, name, "must be a standard resource type or fully qualified"))
	}
	return errs
}

func validateContainerResourceName(name corev1.ResourceName, path *field.Path) field.ErrorList {
	errs := validateResourceName(name, path)
	if !strings.Contains(string(name), "/") {
		if !standardContainerResources.Has(name) && !isHugePages(name) {
			errs = append(errs, field.Invalid(path, name, "must be a standard resource for containers"))
		}
	} else if !isNativeResource(name) && !isExtendedResource(name) {
		errs = append(errs, field.Invalid(path, name, "doesn't follow extended resource name standard"))
	}
	return errs
}

// validateHugePageValue requires hugepage quantities to be whole pages.
func validateHugePageValue(name corev1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	size, err := resource.ParseQuantity(strings.TrimPrefix(string(name), hugePagesPrefix))
	if err != nil || size.Value() <= 0 || q.Value()%size.Value() != 0 {
		return field.ErrorList{field.Invalid(path, q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), name))}
	}
	return nil
}

func validateResourceRequirements(r *corev1.ResourceRequirements, claims sets.Set[string], fldPath *field.Path) field.ErrorList {
	return validateRequirements(r, validateContainerResourceName, claims, fldPath)
}

// validateRequirements checks resource requirements whose names nameRule
// checks (a container's or the pod's).
func validateRequirements(r *corev1.ResourceRequirements, nameRule func(corev1.ResourceName, *field.Path) field.ErrorList, claims sets.Set[string], fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	limPath, reqPath := fldPath.Child("limits"), fldPath.Child("requests")
	cpuOrMemory, hugePages := false, false
	for _, name := range sortedResourceNames(r.Limits) {
		q, path := r.Limits[name], limPath.Key(string(name))
		errs = append(errs, nameRule(name, path)...)
		errs = append(errs, validateResourceQuantityValue(name, q, path)...)
		if isHugePages(name) {
			hugePages = true
			errs = append(errs, validateHugePageValue(name, q, path)...)
		}
		cpuOrMemory = cpuOrMemory || name == corev1.ResourceCPU || name == corev1.ResourceMemory
	}
	for _, name := range sortedResourceNames(r.Requests) {
		q, path := r.Requests[name], reqPath.Key(string(name))
		errs = append(errs, nameRule(name, path)...)
		errs = append(errs, validateResourceQuantityValue(name, q, path)...)
		if limit, ok := r.Limits[name]; ok {
			if q.Cmp(limit) != 0 && !isOvercommitAllowed(name) {
				errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
			} else if q.Cmp(limit) > 0 {
				errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
			}
		} else if !isOvercommitAllowed(name) {
			errs = append(errs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
		if isHugePages(name) {
			hugePages = true
			errs = append(errs, validateHugePageValue(name, q, path)...)
		}
		cpuOrMemory = cpuOrMemory || name == corev1.ResourceCPU || name == corev1.ResourceMemory
	}
	if hugePages && !cpuOrMemory {
		errs = append(errs, field.Forbidden(fldPath, "HugePages require cpu or memory"))
	}
	return append(errs, validateClaimRefs(r.Claims, claims, fldPath.Child("claims"))...)
}

// sortedResourceNames gives map iteration a stable order (upstream iterates
// the map; the set of errors is the same).
func sortedResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		names = append(names, name)
	}
	return sets.List(sets.New(names...))
}

func validateClaimRefs(refs []corev1.ResourceClaim, podClaims sets.Set[string], fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, ref := range refs {
		if ref.Name == "" {
			errs = append(errs, field.Required(fldPath.Index(i), ""))
			continue
		}
		key := ref.Name
		if ref.Request != "" {
			errs = append(errs, dns1123Label(ref.Request, fldPath.Index(i).Child("request"))...)
			key += "/" + ref.Request
		}
		if seen.Has(key) {
			errs = append(errs, field.Duplicate(fldPath.Index(i), key))
		}
		seen.Insert(key)
		if !podClaims.Has(ref.Name) {
			e := field.NotFound(fldPath.Index(i), ref.Name)
			e.Detail = "must be one of the names in pod.spec.resourceClaims"
			if podClaims.Len() == 0 {
				e.Detail += " which is empty"
			} else {
				e.Detail += ": " + strings.Join(sets.List(podClaims), ", ")
			}
			errs = append(errs, e)
		}
	}
	return errs
}

// integerResources are the standard resources counted in whole units.
var integerResources = sets.New[corev1.ResourceName](corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices,
	corev1.ResourceReplicationControllers, corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers)

// validateResourceQuantityValue: not negative, and whole for the integer
// resources and extended ones (upstream's ValidateResourceQuantityValue).
func validateResourceQuantityValue(name corev1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(path, q.String(), apivalidation.IsNegativeErrorMsg))
	}
	if (integerResources.Has(name) || isExtendedResource(name)) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(path, q, "must be an integer"))
	}
	return errs
}
