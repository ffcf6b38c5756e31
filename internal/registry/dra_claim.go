package registry

import (
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ResourceClaim's strategy, as upstream's pkg/registry/resource/resourceclaim:
// decoding defaults each request's allocation mode and count and each
// toleration's operator; a create starts from an empty status and is
// checked in full (a request for admin access needs the admin-access label
// on the namespace); the spec is immutable; a status write keeps the
// stored spec and the metadata a status strategy resets, drops the fields
// of disabled gates and the device statuses of devices no longer
// allocated, and needs the binding permission to change the allocation or
// the reservations and the driver permission to change device statuses.

func resourceClaimStrategy() Strategy {
	return Strategy{
		Default: func(obj runtime.Object) { defaultClaim(obj.(*resourcev1.ResourceClaim)) },
		PrepareForCreate: func(obj runtime.Object) {
			dropDisabledClaimSpecFields(&obj.(*resourcev1.ResourceClaim).Spec, nil, draGates)
		},
		PrepareForUpdate: func(obj, old runtime.Object) {
			dropDisabledClaimSpecFields(&obj.(*resourcev1.ResourceClaim).Spec, &old.(*resourcev1.ResourceClaim).Spec, draGates)
		},
		Validate: func(obj runtime.Object) field.ErrorList {
			c := obj.(*resourcev1.ResourceClaim)
			return withDeclarative(validateClaimSpec(&c.Spec, specPath, false), declareClaim(opCreate, c, nil))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			c, was := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
			errs := ValidateObjectMeta(c, true, apivalidation.NameIsDNSSubdomain)
			if !apiequality.Semantic.DeepEqual(c.Spec, was.Spec) {
				errs = append(errs, field.Invalid(specPath, internalJSON(c.Spec), fieldImmutable).
					WithOrigin("immutable").MarkCoveredByDeclarative())
			}
			return withDeclarative(errs, declareClaim(opUpdate, c, was))
		},
		Checks: func(obj, old runtime.Object) []Check {
			if old != nil {
				return nil // the spec is immutable
			}
			c := obj.(*resourcev1.ResourceClaim)
			return adminAccessChecks(c.Namespace, c.Spec.Devices.Requests, specPath)
		},
		Subresources: map[string]SubresourceStrategy{"status": claimStatusStrategy()},
	}
}

func claimStatusStrategy() SubresourceStrategy {
	return SubresourceStrategy{
		PrepareForUpdate: func(obj, old runtime.Object, gates FeatureGates) {
			c, was := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
			c.Spec = *was.Spec.DeepCopy()
			metav1.ResetObjectMetaForStatus(&c.ObjectMeta, &was.ObjectMeta)
			dropDisabledClaimStatusFields(c, was, gates)
			dropDeallocatedDeviceStatuses(c, was, gates)
		},
		ValidateUpdate: func(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
			c, was := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
			errs := ValidateObjectMetaUpdate(obj, old)
			errs = append(errs, validateClaimStatusUpdate(c, was)...)
			return withDeclarative(errs, declareClaim(opUpdate, c, was))
		},
		Checks: claimStatusChecks,
	}
}

// The operations the declarative rules run under.
var (
	opCreate = operation.Operation{Type: operation.Create}
	opUpdate = operation.Operation{Type: operation.Update}
)
