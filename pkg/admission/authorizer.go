package admission

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// AuthorizationDecision is an authorizer's verdict. The values are those of
// upstream's authorizer.Decision.
type AuthorizationDecision int

// The three verdicts, in upstream's order.
const (
	// AuthorizationDeny forbids the action.
	AuthorizationDeny AuthorizationDecision = iota
	// AuthorizationAllow permits the action.
	AuthorizationAllow
	// AuthorizationNoOpinion leaves the action to another authorizer; a
	// chain that ends with no opinion forbids.
	AuthorizationNoOpinion
)

// AuthorizationAttributes describe one action to authorize, as upstream's
// authorizer.AttributesRecord.
type AuthorizationAttributes struct {
	User authenticationv1.UserInfo
	Verb string
	// ResourceRequest is true for API resources, false for other paths
	// such as /healthz (then only Path and Verb are set).
	ResourceRequest bool
	APIGroup        string
	APIVersion      string
	Resource        string
	Subresource     string
	Namespace       string
	Name            string
	Path            string
	// FieldSelector and LabelSelector are the parsed selectors of a check
	// that named them; a selector that did not parse leaves its
	// requirements nil and its parsing error set.
	FieldSelector           fields.Requirements
	FieldSelectorParsingErr error
	LabelSelector           labels.Requirements
	LabelSelectorParsingErr error
}

// Authorizer decides whether a user may perform an action. Admission CEL
// expressions reach it through their authorizer variable. reason explains the
// decision; err reports a failure to decide.
type Authorizer interface {
	Authorize(ctx context.Context, a AuthorizationAttributes) (d AuthorizationDecision, reason string, err error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, a AuthorizationAttributes) (AuthorizationDecision, string, error)

// Authorize calls f(ctx, a).
func (f AuthorizerFunc) Authorize(ctx context.Context, a AuthorizationAttributes) (AuthorizationDecision, string, error) {
	return f(ctx, a)
}
