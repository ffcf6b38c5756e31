package registry

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/pkg/admission/match"
)

// staticNameSuffix ends the names reserved for manifest-based admission
// configurations.
const staticNameSuffix = ".static.k8s.io"

// upstreamAdmissionWarnings are the warnings of a write of a webhook
// configuration, a policy or a binding (Resource.Warnings adds admitd's
// own lint findings after them): kube-apiserver 1.37's, with its
// default gates: on update, a name with the reserved static suffix (a
// create with one is refused, ManifestBasedAdmissionControlConfig being
// on); on create and update, webhook rules naming a resource webhooks
// never see (ExcludeAdmissionWebhookVirtualResources).
func upstreamAdmissionWarnings(obj, old runtime.Object) []string {
	var w []string
	if m, err := meta.Accessor(obj); err == nil && old != nil && strings.HasSuffix(m.GetName(), staticNameSuffix) {
		w = append(w, fmt.Sprintf("metadata.name: names ending with %q are reserved for static manifest-based configurations and cannot be managed via the API", staticNameSuffix))
	}
	var rules [][]v1.RuleWithOperations
	switch c := obj.(type) {
	case *v1.ValidatingWebhookConfiguration:
		for _, h := range c.Webhooks {
			rules = append(rules, h.Rules)
		}
	case *v1.MutatingWebhookConfiguration:
		for _, h := range c.Webhooks {
			rules = append(rules, h.Rules)
		}
	}
	for i, hook := range rules {
		p := field.NewPath("webhooks").Index(i).Child("rules")
		for j, r := range hook {
			for _, gr := range excludedResourcesOf(r.Rule) {
				w = append(w, fmt.Sprintf("%s: %s is excluded from admission webhooks; this rule will have no effect", p.Index(j), gr))
			}
		}
	}
	return w
}

// excludedResourcesOf are the excluded resources a rule names by group
// and resource, each once, in the rule's order; none for a wildcard.
func excludedResourcesOf(r v1.Rule) []schema.GroupResource {
	if slices.Contains(r.APIGroups, "*") || slices.Contains(r.Resources, "*") {
		return nil
	}
	excluded := match.VirtualResources() // upstream's exclusion.Excluded
	var out []schema.GroupResource
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			gr := schema.GroupResource{Group: g, Resource: res}
			if slices.Contains(excluded, gr) && !slices.Contains(out, gr) {
				out = append(out, gr)
			}
		}
	}
	return out
}
