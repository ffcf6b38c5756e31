package registry

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// API Priority and Fairness configuration: FlowSchemas and
// PriorityLevelConfigurations of flowcontrol.apiserver.k8s.io, as
// kube-apiserver 1.37 serves them (pkg/registry/flowcontrol). Only v1 is
// served: v1beta1 to v1beta3 are off by default, and 1.37 builds no
// storage for them anyway, so v1beta3's nominalConcurrencyShares
// round-trip annotation never reaches a client, and v1 refuses it
// (flowcontrol_validate_plc.go).
//
// Both kinds are cluster-scoped with a status subresource, no short names
// and no categories. A create starts from an empty status at generation 1,
// and a change of spec bumps the generation. A write through /status keeps
// only the new status and the request's managedFields: spec and every
// other piece of metadata stay as stored, and only the status (besides the
// common metadata rules) is validated.
//
// Defaults are in flowcontrol_defaults.go; validation (upstream's
// pkg/apis/flowcontrol/validation, with the declarative rules of
// k8s.io/api/flowcontrol/v1) in flowcontrol_validate.go and
// flowcontrol_validate_plc.go.

func flowcontrolKinds() []descriptor {
	dns := apivalidation.NameIsDNSSubdomain
	return []descriptor{
		{gv: "flowcontrol.apiserver.k8s.io/v1", resource: "flowschemas", kind: "FlowSchema", status: statusReset, generation: true,
			name: dns, strategy: flowSchemaStrategy()},
		{gv: "flowcontrol.apiserver.k8s.io/v1", resource: "prioritylevelconfigurations", kind: "PriorityLevelConfiguration",
			status: statusReset, generation: true, name: dns, strategy: priorityLevelStrategy()},
	}
}

func flowSchemaStrategy() Strategy {
	validate := func(obj runtime.Object) field.ErrorList { return validateFlowSchema(obj.(*flowcontrolv1.FlowSchema)) }
	return Strategy{
		Default:        func(obj runtime.Object) { defaultFlowSchema(obj.(*flowcontrolv1.FlowSchema)) },
		Validate:       validate,
		ValidateUpdate: func(obj, _ runtime.Object) field.ErrorList { return validate(obj) },
		Subresources: map[string]SubresourceStrategy{"status": {
			PrepareForUpdate: func(obj, old runtime.Object, _ FeatureGates) {
				fs, was := obj.(*flowcontrolv1.FlowSchema), old.(*flowcontrolv1.FlowSchema)
				keepStatusOnly(&fs.ObjectMeta, &was.ObjectMeta)
				fs.Spec = *was.Spec.DeepCopy()
			},
			ValidateUpdate: func(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
				errs := ValidateObjectMetaUpdate(obj, old)
				return append(errs, validateFlowSchemaStatus(obj.(*flowcontrolv1.FlowSchema).Status)...)
			},
		}},
	}
}

func priorityLevelStrategy() Strategy {
	return Strategy{
		Default: func(obj runtime.Object) { defaultPriorityLevel(obj.(*flowcontrolv1.PriorityLevelConfiguration)) },
		Validate: func(obj runtime.Object) field.ErrorList {
			return validatePriorityLevel(obj.(*flowcontrolv1.PriorityLevelConfiguration), nil)
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			return validatePriorityLevel(obj.(*flowcontrolv1.PriorityLevelConfiguration), old.(*flowcontrolv1.PriorityLevelConfiguration))
		},
		Subresources: map[string]SubresourceStrategy{"status": {
			PrepareForUpdate: func(obj, old runtime.Object, _ FeatureGates) {
				pl, was := obj.(*flowcontrolv1.PriorityLevelConfiguration), old.(*flowcontrolv1.PriorityLevelConfiguration)
				keepStatusOnly(&pl.ObjectMeta, &was.ObjectMeta)
				pl.Spec = *was.Spec.DeepCopy()
			},
			ValidateUpdate: func(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
				errs := ValidateObjectMetaUpdate(obj, old)
				return append(errs, validatePriorityLevelStatus(obj.(*flowcontrolv1.PriorityLevelConfiguration).Status)...)
			},
		}},
	}
}

// keepStatusOnly is the metadata of a write through /status of either
// kind: the stored metadata, with the managedFields the write recorded.
func keepStatusOnly(m, old *metav1.ObjectMeta) {
	managed := m.ManagedFields
	*m = *old.DeepCopy()
	m.ManagedFields = managed
}
