package registry

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
)

// admissionregistrationKinds are the admissionregistration.k8s.io/v1 kinds:
// webhook configurations, admission policies and their bindings.
func admissionregistrationKinds() []descriptor {
	kind := func(resource, kind string, generation bool, s Strategy) descriptor {
		return descriptor{gv: "admissionregistration.k8s.io/v1", resource: resource, kind: kind, categories: []string{"api-extensions"},
			generation: generation, name: apivalidation.NameIsDNSSubdomain, strategy: s}
	}
	vap := kind("validatingadmissionpolicies", "ValidatingAdmissionPolicy", true, Strategy{Default: defaultValidatingAdmissionPolicy,
		Validate: validateValidatingAdmissionPolicy, ValidateUpdate: validateValidatingAdmissionPolicyUpdate})
	vap.status = statusSubresource
	return []descriptor{
		kind("mutatingadmissionpolicies", "MutatingAdmissionPolicy", true, Strategy{Default: defaultMutatingAdmissionPolicy,
			Validate: validateMutatingAdmissionPolicy, ValidateUpdate: validateMutatingAdmissionPolicyUpdate}),
		kind("mutatingadmissionpolicybindings", "MutatingAdmissionPolicyBinding", true, Strategy{Default: defaultMutatingAdmissionPolicyBinding,
			Validate: validateMutatingAdmissionPolicyBinding, ValidateUpdate: validateMutatingAdmissionPolicyBindingUpdate}),
		kind("mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false, Strategy{Default: defaultMutatingWebhookConfiguration,
			Validate: validateMutatingWebhookConfiguration, ValidateUpdate: validateMutatingWebhookConfigurationUpdate}),
		vap,
		kind("validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", true, Strategy{Default: defaultValidatingAdmissionPolicyBinding,
			Validate: validateValidatingAdmissionPolicyBinding, ValidateUpdate: validateValidatingAdmissionPolicyBindingUpdate}),
		kind("validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false, Strategy{Default: defaultValidatingWebhookConfiguration,
			Validate: validateValidatingWebhookConfiguration, ValidateUpdate: validateValidatingWebhookConfigurationUpdate}),
	}
}
