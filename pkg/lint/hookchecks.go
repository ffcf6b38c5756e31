package lint

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/admissionregistration/v1"
)

// lintFailOnWildcard reports webhooks that fail closed on every resource
// (of every group: an error; of some groups: a warning).
func lintFailOnWildcard(h *hook) []Finding {
	if !h.failsClosed() {
		return nil
	}
	for i, r := range h.rules {
		if !slices.Contains(r.Resources, "*") && !slices.Contains(r.Resources, "*/*") {
			continue
		}
		sev, scope := Warning, fmt.Sprintf("every resource of API groups %q", r.APIGroups)
		if slices.Contains(r.APIGroups, "*") {
			sev, scope = Error, "every resource of every API group"
		}
		return []Finding{h.finding(FailOnWildcard, sev, h.field(fmt.Sprintf("rules[%d].resources", i)),
			fmt.Sprintf("webhook %q has failurePolicy %s on %s (resources %q)", h.name, h.failurePolicy, scope, r.Resources))}
	}
	return nil
}

// lintSideEffects reports sideEffects Unknown or Some, and a missing
// value, which v1 rejects.
func lintSideEffects(h *hook) []Finding {
	se := "<unset>"
	if h.sideEffects != nil {
		se = string(*h.sideEffects)
	}
	switch se {
	case string(v1.SideEffectClassNone), string(v1.SideEffectClassNoneOnDryRun):
		return nil
	}
	return []Finding{h.finding(UnsafeSideEffects, Error, h.field("sideEffects"),
		fmt.Sprintf("webhook %q declares sideEffects %s; dry-run requests it matches are rejected", h.name, se))}
}

// lintReviewVersions reports webhooks that accept no AdmissionReview
// version but v1beta1.
func lintReviewVersions(h *hook) []Finding {
	if slices.Contains(h.reviewVersions, "v1") || !slices.Contains(h.reviewVersions, "v1beta1") {
		return nil
	}
	return []Finding{h.finding(V1beta1OnlyReview, Warning, h.field("admissionReviewVersions"),
		fmt.Sprintf("webhook %q accepts admissionReviewVersions %q: no admission.k8s.io/v1", h.name, h.reviewVersions))}
}
