package match

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// Exemption says which hooks never see a request, whatever their rules.
type Exemption uint8

// Exemptions, from none to all.
const (
	// NotExempt: every hook may match.
	NotExempt Exemption = iota
	// ExemptFromAPIHooks: hooks defined through the API are skipped (so a
	// cluster cannot lock itself out); static manifest hooks still match.
	ExemptFromAPIHooks
	// ExemptFromAllHooks: no hook is consulted; the request is allowed.
	ExemptFromAllHooks
)

// virtualResources are the non-persisted review resources kube-apiserver
// excludes from admission hooks (version and subresource ignored).
var virtualResources = []schema.GroupResource{
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"},
	{Group: "authentication.k8s.io", Resource: "tokenreviews"},
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"},
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"},
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"},
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
}

// VirtualResources returns a copy of the review resources that admission
// hooks never see.
func VirtualResources() []schema.GroupResource { return slices.Clone(virtualResources) }

const admissionGroup = "admissionregistration.k8s.io"

// WebhookExemption tells which webhooks are skipped for a. Webhooks are
// skipped for the virtual review resources when excludeVirtual (feature
// gate ExcludeAdmissionWebhookVirtualResources, on by default in 1.37) is
// set, and API-defined webhooks are skipped for the admission configuration
// kinds (webhook configurations, policies and bindings, any version and
// subresource). The second check is on the request kind, not the resource.
func WebhookExemption(a *admission.Attributes, excludeVirtual bool) Exemption {
	if excludeVirtual && slices.Contains(virtualResources, a.Resource.GroupResource()) {
		return ExemptFromAllHooks
	}
	if a.Kind.Group == admissionGroup {
		switch a.Kind.Kind {
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
			"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding":
			return ExemptFromAPIHooks
		}
	}
	return NotExempt
}

// PolicyExemption tells which admission policies are skipped for a: all of
// them for the virtual review resources (no feature gate), and API-defined
// ones for the policy and binding resources. Webhook configurations are not
// exempt from policies.
func PolicyExemption(a *admission.Attributes) Exemption {
	gr := a.Resource.GroupResource()
	if slices.Contains(virtualResources, gr) {
		return ExemptFromAllHooks
	}
	if gr.Group == admissionGroup {
		switch gr.Resource {
		case "validatingadmissionpolicies", "validatingadmissionpolicybindings",
			"mutatingadmissionpolicies", "mutatingadmissionpolicybindings":
			return ExemptFromAPIHooks
		}
	}
	return NotExempt
}
