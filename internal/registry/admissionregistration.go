package registry

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"

	"github.com/admitd/admitd/pkg/apis/admissionregistration"
	"github.com/admitd/admitd/pkg/lint"
)

// admissionregistrationKinds are the admissionregistration.k8s.io/v1 kinds:
// webhook configurations, admission policies and their bindings. Their
// defaulting and validation live in pkg/apis/admissionregistration, which
// the admission plugins share. A write of a webhook configuration or a
// policy returns upstream's warnings, then as warnings the findings of
// pkg/lint that need no other object (admissionregistration_warnings.go).
func admissionregistrationKinds() []descriptor {
	s := Strategy{Default: admissionregistration.Default, Validate: admissionregistration.Validate,
		ValidateUpdate: admissionregistration.ValidateUpdate,
		Warnings:       upstreamAdmissionWarnings, LintWarnings: lint.Warnings}
	kind := func(resource, kind string, generation bool) descriptor {
		return descriptor{gv: "admissionregistration.k8s.io/v1", resource: resource, kind: kind, categories: []string{"api-extensions"},
			generation: generation, name: apivalidation.NameIsDNSSubdomain, strategy: s}
	}
	vap := kind("validatingadmissionpolicies", "ValidatingAdmissionPolicy", true)
	vap.status = statusSubresource
	vap.strategy.ResetStatusMetadata = resetStatusMetadataAll
	return []descriptor{
		kind("mutatingadmissionpolicies", "MutatingAdmissionPolicy", true),
		kind("mutatingadmissionpolicybindings", "MutatingAdmissionPolicyBinding", true),
		kind("mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false),
		vap,
		kind("validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", true),
		kind("validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false),
	}
}
