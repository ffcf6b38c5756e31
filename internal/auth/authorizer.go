package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Decision is an authorizer's verdict. The values match upstream's
// authorizer.Decision.
type Decision int

const (
	// DecisionDeny forbids the action; no later authorizer is asked.
	DecisionDeny Decision = iota
	// DecisionAllow permits the action.
	DecisionAllow
	// DecisionNoOpinion leaves the action to the next authorizer; at the
	// end of the chain it forbids.
	DecisionNoOpinion
)

// Attributes describe one action to authorize, as upstream's
// authorizer.AttributesRecord.
type Attributes struct {
	User authenticationv1.UserInfo
	Verb string
	// ResourceRequest is true for API resources, false for other paths
	// such as /healthz.
	ResourceRequest bool
	APIGroup        string
	APIVersion      string
	Resource        string
	Subresource     string
	Namespace       string
	Name            string
	// Path is the request path; authorizers read it for non-resource
	// requests.
	Path string
	// FieldSelector and LabelSelector narrow a list, watch or
	// deletecollection to the objects they select (the request's, or an
	// access review's); nil selects all. RBAC ignores them, as upstream's.
	FieldSelector fields.Requirements
	LabelSelector labels.Requirements
}

// Authorizer decides whether a user may perform an action. reason explains
// the decision to the user; err reports a failure to decide (an authorizer
// may still allow despite an error).
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (d Decision, reason string, err error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, a Attributes) (Decision, string, error)

// Authorize calls f(ctx, a).
func (f AuthorizerFunc) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	return f(ctx, a)
}

// htmlEscaper keeps a forbidden message from looking like HTML, as upstream
// does; quotes are left alone.
var htmlEscaper = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// Forbidden returns the 403 upstream answers when a is not allowed, with
// reason appended after a colon when there is one. For example:
//
//	users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope
func Forbidden(a Attributes, reason string) *apierrors.StatusError {
	msg := htmlEscaper.Replace(forbiddenMessage(a))
	if reason != "" {
		msg += ": " + reason
	}
	gr := schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}
	return apierrors.NewForbidden(gr, a.Name, errors.New(msg))
}

func forbiddenMessage(a Attributes) string {
	if !a.ResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", a.User.Username, a.Verb, a.Path)
	}
	resource := a.Resource
	if a.Subresource != "" {
		resource += "/" + a.Subresource
	}
	if a.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q",
			a.User.Username, a.Verb, resource, a.APIGroup, a.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope",
		a.User.Username, a.Verb, resource, a.APIGroup)
}
