package registry

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ResourceQuota validation, as kube-apiserver 1.37's ValidateResourceQuota,
// ValidateResourceQuotaUpdate and ValidateResourceQuotaStatusUpdate. A
// create starts from an empty status (statusReset) and an update of the
// main resource keeps the stored one, so only a status write has a status
// to check. The strategy takes part in declarative validation, which
// drops errors whose message repeats (uniqueMessages).

var (
	quotaSpecPath   = field.NewPath("spec")
	quotaStatusPath = field.NewPath("status")
)

// quotaResources are the resource names a quota may count without a
// domain, besides hugepages.
var quotaResources = sets.New[corev1.ResourceName](
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets, corev1.ResourcePersistentVolumeClaims, corev1.ResourceConfigMaps,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers)

// countedResources are measured in whole numbers (with extended resources).
var countedResources = sets.New[corev1.ResourceName](
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers)

func isQuotaResource(name corev1.ResourceName) bool {
	return quotaResources.Has(name) || isHugePages(name) || strings.HasPrefix(string(name), "requests."+hugePagesPrefix)
}

func validateResourceQuota(obj runtime.Object) field.ErrorList {
	q := obj.(*corev1.ResourceQuota)
	errs := validateQuotaSpec(&q.Spec)
	return uniqueMessages(append(errs, validateQuotaUsage(&q.Status)...))
}

// validateResourceQuotaUpdate: the new metadata as k8s.io/apiserver checks
// it, the spec as on create, and the scopes, as a set, stay.
func validateResourceQuotaUpdate(obj, old runtime.Object) field.ErrorList {
	q, was := obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota)
	errs := append(commonObjectMetaBeyondUpdate(obj, old, true), validateQuotaSpec(&q.Spec)...)
	if !sets.New(q.Spec.Scopes...).Equal(sets.New(was.Spec.Scopes...)) {
		errs = append(errs, field.Invalid(quotaSpecPath.Child("scopes"), q.Spec.Scopes, apivalidation.FieldImmutableErrorMsg))
	}
	return uniqueMessages(errs)
}

// validateResourceQuotaStatusUpdate: the new metadata and its change, a resourceVersion
// (reported outside metadata, as upstream does), then the status.
func validateResourceQuotaStatusUpdate(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
	q := obj.(*corev1.ResourceQuota)
	errs := append(commonObjectMeta(obj, true), ValidateObjectMetaUpdate(obj, old)...)
	if q.ResourceVersion == "" {
		errs = append(errs, field.Required(field.NewPath("resourceVersion"), ""))
	}
	return uniqueMessages(append(errs, validateQuotaUsage(&q.Status)...))
}

func validateQuotaSpec(spec *corev1.ResourceQuotaSpec) field.ErrorList {
	errs := validateQuotaList(spec.Hard, quotaSpecPath.Child("hard"))
	errs = append(errs, validateQuotaScopes(spec)...)
	if spec.ScopeSelector != nil {
		errs = append(errs, validateQuotaScopeSelector(spec)...)
	}
	return errs
}

func validateQuotaUsage(status *corev1.ResourceQuotaStatus) field.ErrorList {
	errs := validateQuotaList(status.Hard, quotaStatusPath.Child("hard"))
	return append(errs, validateQuotaList(status.Used, quotaStatusPath.Child("used"))...)
}

// validateQuotaList checks each entry's name and amount (in map order, as
// upstream reports them).
func validateQuotaList(list corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range list {
		at := p.Key(string(name))
		errs = append(errs, validateQuotaResourceName(name, at)...)
		errs = append(errs, validateQuotaAmount(name, q, at)...)
	}
	return errs
}

func validateQuotaResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	errs := validateResourceName(name, p)
	if !strings.Contains(string(name), "/") && !isQuotaResource(name) {
		errs = append(errs, field.Invalid(p, name, "must be a standard resource for quota"))
	}
	return errs
}

// validateQuotaAmount: not negative, and whole for counted and extended
// resources.
func validateQuotaAmount(name corev1.ResourceName, q resource.Quantity, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(p, q.String(), apivalidation.IsNegativeErrorMsg))
	}
	if (countedResources.Has(name) || isExtendedResource(name)) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(p, q, "must be an integer"))
	}
	return errs
}
