package registry

import (
	"fmt"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The kinds of resource.k8s.io/v1 (dynamic resource allocation) as
// kube-apiserver 1.37 serves them by default (pkg/registry/resource), in
// name order; v1beta1, v1beta2 and v1alpha3 stay off. None has short names
// or categories.
//
// DeviceClass, ResourceSlice and DeviceTaintRule are cluster-scoped;
// ResourceClaim and ResourceClaimTemplate namespaced. ResourceClaim and
// DeviceTaintRule have a status subresource: a create starts from an empty
// status, a write of the main resource keeps the stored one, a status
// write keeps the stored spec and the metadata a status strategy resets.
// DeviceClass, ResourceSlice and DeviceTaintRule count generations: 1 on
// create, one more on every change of spec.
//
// Every strategy reads the feature gates at their 1.37 defaults (draGates)
// and drops the fields of the gates that are off, unless the stored object
// already uses them. Defaults and field drops are in dra_prepare.go,
// validation in dra_validate*.go (upstream's pkg/apis/resource/validation)
// and dra_declarative*.go (the declarative rules 1.37 enforces), the
// checks that need the cluster (a namespace's admin-access label, the
// binding and driver permissions of claim status writes) in dra_checks.go.
//
// A ResourceSlice may be selected by spec.nodeName, spec.driver and
// spec.pool.name, and by metadata.name but not metadata.namespace.
// DeviceTaintRule's v1 storage does not answer a delete with the object
// and refuses an update that names no resourceVersion.

func draKinds() []descriptor {
	dns := apivalidation.NameIsDNSSubdomain
	return []descriptor{
		// A class's name is checked by the declarative rule, after the
		// spec's handwritten errors (deviceClassStrategy).
		{gv: "resource.k8s.io/v1", resource: "deviceclasses", kind: "DeviceClass", name: anyName, strategy: deviceClassStrategy()},
		{gv: "resource.k8s.io/v1", resource: "devicetaintrules", kind: "DeviceTaintRule", name: dns, status: statusReset,
			strategy: deviceTaintRuleStrategy()},
		{gv: "resource.k8s.io/v1", resource: "resourceclaims", kind: "ResourceClaim", namespaced: true, name: dns, status: statusReset,
			strategy: resourceClaimStrategy()},
		{gv: "resource.k8s.io/v1", resource: "resourceclaimtemplates", kind: "ResourceClaimTemplate", namespaced: true, name: dns,
			strategy: resourceClaimTemplateStrategy()},
		{gv: "resource.k8s.io/v1", resource: "resourceslices", kind: "ResourceSlice", name: dns,
			fields: []string{"spec.nodeName", "spec.driver", "spec.pool.name"}, strictFields: true, strategy: resourceSliceStrategy(),
			fieldRefusal: func(label string) string {
				return fmt.Sprintf("field label not supported for %s: %s", resourcev1.SchemeGroupVersion.WithKind("ResourceSlice"), label)
			}},
	}
}

// anyName accepts every name: the kind checks it in its own validation.
func anyName(string, bool) []string { return nil }

// draGates are the gates the resource.k8s.io strategies read.
var draGates FeatureGates = defaultGates{}

// now is the clock of the taint times the strategies set.
var now = time.Now

func deviceClassStrategy() Strategy {
	return Strategy{
		PrepareForCreate: func(obj runtime.Object) {
			c := obj.(*resourcev1.DeviceClass)
			c.Generation = 1
			dropDisabledClassFields(&c.Spec, nil, draGates)
		},
		PrepareForUpdate: func(obj, old runtime.Object) {
			c, was := obj.(*resourcev1.DeviceClass), old.(*resourcev1.DeviceClass)
			dropDisabledClassFields(&c.Spec, &was.Spec, draGates)
			bumpGeneration(&c.ObjectMeta, &was.ObjectMeta, c.Spec, was.Spec)
		},
		Validate: func(obj runtime.Object) field.ErrorList {
			c := obj.(*resourcev1.DeviceClass)
			return withDeclarative(validateDeviceClassSpec(&c.Spec, nil), declareDeviceClass(opCreate, c, nil))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			c, was := obj.(*resourcev1.DeviceClass), old.(*resourcev1.DeviceClass)
			errs := ValidateObjectMeta(c, false, anyName)
			errs = append(errs, validateDeviceClassSpec(&c.Spec, &was.Spec)...)
			return withDeclarative(errs, declareDeviceClass(opUpdate, c, was))
		},
	}
}

// bumpGeneration counts one more generation when spec changed.
func bumpGeneration(m, old *metav1.ObjectMeta, spec, oldSpec any) {
	if !apiequality.Semantic.DeepEqual(spec, oldSpec) {
		m.Generation = old.Generation + 1
	}
}

func resourceClaimTemplateStrategy() Strategy {
	return Strategy{
		Default: func(obj runtime.Object) { defaultClaimSpec(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec) },
		PrepareForCreate: func(obj runtime.Object) {
			dropDisabledClaimSpecFields(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec, nil, draGates)
		},
		PrepareForUpdate: func(obj, old runtime.Object) {
			dropDisabledClaimSpecFields(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec,
				&old.(*resourcev1.ResourceClaimTemplate).Spec.Spec, draGates)
		},
		Validate: func(obj runtime.Object) field.ErrorList {
			t := obj.(*resourcev1.ResourceClaimTemplate)
			return withDeclarative(validateClaimTemplateSpec(&t.Spec), declareClaimTemplate(opCreate, t, nil))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			t, was := obj.(*resourcev1.ResourceClaimTemplate), old.(*resourcev1.ResourceClaimTemplate)
			errs := ValidateObjectMeta(t, true, apivalidation.NameIsDNSSubdomain)
			errs = append(errs, validateClaimTemplateSpec(&t.Spec)...)
			if !apiequality.Semantic.DeepEqual(t.Spec, was.Spec) {
				errs = append(errs, field.Invalid(specPath, internalJSON(t.Spec), fieldImmutable))
			}
			return withDeclarative(errs, declareClaimTemplate(opUpdate, t, was))
		},
		Checks: func(obj, old runtime.Object) []Check {
			if old != nil {
				return nil // the spec is immutable
			}
			t := obj.(*resourcev1.ResourceClaimTemplate)
			return adminAccessChecks(t.Namespace, t.Spec.Spec.Devices.Requests, specPath.Child("spec"))
		},
	}
}

func resourceSliceStrategy() Strategy {
	return Strategy{
		Default: func(obj runtime.Object) { defaultSlice(obj.(*resourcev1.ResourceSlice)) },
		PrepareForCreate: func(obj runtime.Object) {
			s := obj.(*resourcev1.ResourceSlice)
			s.Generation = 1
			dropDisabledSliceFields(&s.Spec, nil, draGates)
		},
		PrepareForUpdate: func(obj, old runtime.Object) {
			s, was := obj.(*resourcev1.ResourceSlice), old.(*resourcev1.ResourceSlice)
			bumpGeneration(&s.ObjectMeta, &was.ObjectMeta, s.Spec, was.Spec)
			dropDisabledSliceFields(&s.Spec, &was.Spec, draGates)
		},
		Validate: func(obj runtime.Object) field.ErrorList {
			s := obj.(*resourcev1.ResourceSlice)
			return withDeclarative(validateSliceSpec(&s.Spec, nil), declareSlice(opCreate, s, nil))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			s, was := obj.(*resourcev1.ResourceSlice), old.(*resourcev1.ResourceSlice)
			return withDeclarative(validateSliceSpec(&s.Spec, &was.Spec), declareSlice(opUpdate, s, was))
		},
		Warnings: func(obj, _ runtime.Object) []string { return sliceWarnings(obj.(*resourcev1.ResourceSlice)) },
	}
}

func deviceTaintRuleStrategy() Strategy {
	return Strategy{
		Default:          func(obj runtime.Object) { defaultTaint(&obj.(*resourcev1.DeviceTaintRule).Spec.Taint) },
		PrepareForCreate: func(obj runtime.Object) { obj.(*resourcev1.DeviceTaintRule).Generation = 1 },
		PrepareForUpdate: func(obj, old runtime.Object) {
			r, was := obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule)
			// A new effect is a new taint: it counts from now, unless the
			// client set the time itself.
			t := &r.Spec.Taint
			if t.Effect != was.Spec.Taint.Effect && t.TimeAdded.Equal(was.Spec.Taint.TimeAdded) {
				t.TimeAdded = &metav1.Time{Time: now().Truncate(time.Second)}
			}
			bumpGeneration(&r.ObjectMeta, &was.ObjectMeta, r.Spec, was.Spec)
		},
		Validate: func(obj runtime.Object) field.ErrorList {
			r := obj.(*resourcev1.DeviceTaintRule)
			return withDeclarative(validateTaintRuleSpec(&r.Spec, nil), declareTaintRule(opCreate, r, nil))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			r, was := obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule)
			return withDeclarative(validateTaintRuleSpec(&r.Spec, &was.Spec), declareTaintRule(opUpdate, r, was))
		},
		RequireResourceVersion: true,
		Subresources: map[string]SubresourceStrategy{"status": {
			PrepareForUpdate: func(obj, old runtime.Object, _ FeatureGates) {
				r, was := obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule)
				r.Spec = *was.Spec.DeepCopy()
				metav1.ResetObjectMetaForStatus(&r.ObjectMeta, &was.ObjectMeta)
			},
			ValidateUpdate: func(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
				r, was := obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule)
				errs := ValidateObjectMetaUpdate(obj, old)
				errs = append(errs, validateTaintRuleStatus(&r.Status)...)
				return withDeclarative(errs, declareTaintRule(opUpdate, r, was))
			},
		}},
	}
}
