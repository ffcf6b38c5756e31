package admissionregistration

import (
	v1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var metadataPath = field.NewPath("metadata")

// Validate checks a new webhook configuration, admission policy or binding
// (metadata excepted) as upstream's pkg/apis/admissionregistration/validation
// does; other objects have no errors.
func Validate(obj runtime.Object) field.ErrorList {
	switch obj.(type) {
	case *v1.MutatingWebhookConfiguration:
		return validateMutatingWebhookConfiguration(obj)
	case *v1.ValidatingWebhookConfiguration:
		return validateValidatingWebhookConfiguration(obj)
	case *v1.ValidatingAdmissionPolicy:
		return validateValidatingAdmissionPolicy(obj)
	case *v1.ValidatingAdmissionPolicyBinding:
		return validateValidatingAdmissionPolicyBinding(obj)
	case *v1.MutatingAdmissionPolicy:
		return validateMutatingAdmissionPolicy(obj)
	case *v1.MutatingAdmissionPolicyBinding:
		return validateMutatingAdmissionPolicyBinding(obj)
	}
	return nil
}

// ValidateUpdate checks an update of old into obj, both of the same kind:
// some checks are relaxed for what old already had.
func ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	switch obj.(type) {
	case *v1.MutatingWebhookConfiguration:
		return validateMutatingWebhookConfigurationUpdate(obj, old)
	case *v1.ValidatingWebhookConfiguration:
		return validateValidatingWebhookConfigurationUpdate(obj, old)
	case *v1.ValidatingAdmissionPolicy:
		return validateValidatingAdmissionPolicyUpdate(obj, old)
	case *v1.ValidatingAdmissionPolicyBinding:
		return validateValidatingAdmissionPolicyBindingUpdate(obj, old)
	case *v1.MutatingAdmissionPolicy:
		return validateMutatingAdmissionPolicyUpdate(obj, old)
	case *v1.MutatingAdmissionPolicyBinding:
		return validateMutatingAdmissionPolicyBindingUpdate(obj, old)
	}
	return nil
}
