package match

import "k8s.io/apimachinery/pkg/runtime/schema"

// Reason says why a request matched a Criteria or why it did not. It is the
// cheap, allocation-free part of the admission trace.
type Reason uint8

// Reasons, in the order Match reports them.
const (
	// Matched: the hook applies; Decision says with which resource and kind.
	Matched Reason = iota
	// SkipNamespaceSelector: the namespaceSelector does not select the
	// request's namespace.
	SkipNamespaceSelector
	// SkipObjectSelector: the objectSelector selects neither the object nor
	// the old object.
	SkipObjectSelector
	// SkipExcludeRule: an excludeResourceRules entry matches (policies).
	SkipExcludeRule
	// SkipRule: no rule matches the operation, group, version and resource.
	SkipRule
	// SkipScope: a rule matches except for its scope.
	SkipScope
	// SkipResourceName: a rule matches except for its resourceNames
	// (policies).
	SkipResourceName
	// SkipExempt: the resource is never sent to hooks of this kind (see
	// WebhookExemption and PolicyExemption); reported by callers, never by
	// Match.
	SkipExempt
	// Errored: matching failed; Decision.Err says why.
	Errored
)

var reasonNames = [...]string{
	Matched:               "Matched",
	SkipNamespaceSelector: "NamespaceSelector",
	SkipObjectSelector:    "ObjectSelector",
	SkipExcludeRule:       "ExcludeRule",
	SkipRule:              "Rule",
	SkipScope:             "Scope",
	SkipResourceName:      "ResourceName",
	SkipExempt:            "Exempt",
	Errored:               "Error",
}

// String returns a constant name for the reason, for traces and logs.
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "Unknown"
}

// Decision is the result of matching one request against one Criteria.
type Decision struct {
	Reason Reason
	// Equivalent is true when the match was found through matchPolicy
	// Equivalent, on another version (or group) of the request's resource.
	Equivalent bool
	// Resource, Subresource and Kind are, when Matched, what the hook is
	// invoked with: the request's own, or the equivalent resource and its
	// kind. The caller converts the object to Kind, sends Resource, Kind and
	// Subresource as request.resource/kind/subResource and the request's own
	// as requestResource/requestKind/requestSubResource.
	Resource    schema.GroupVersionResource
	Subresource string
	Kind        schema.GroupVersionKind
	// Err is set when Reason is Errored. For webhook criteria it is always
	// a *apierrors.StatusError (a 404 for a missing namespace, else a 500),
	// which upstream returns to the client as is, whatever the failure
	// policy. For policy criteria it is a configuration error, a
	// *apierrors.StatusError from a selector, or the plain "unable to
	// convert" error; the policy's failurePolicy decides.
	Err error
}
