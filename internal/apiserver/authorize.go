package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Decision is an authorizer's answer, as upstream's authorizer.Decision.
type Decision int

const (
	// DecisionDeny forbids the request.
	DecisionDeny Decision = iota
	// DecisionAllow lets it through.
	DecisionAllow
	// DecisionNoOpinion leaves it to the next authorizer; from the last one
	// it forbids the request.
	DecisionNoOpinion
)

// AuthorizationAttributes is what a request asks to do, as upstream's
// authorizer.Attributes: a resource request names a resource (and object),
// any other request a path.
type AuthorizationAttributes struct {
	User              authenticationv1.UserInfo
	Verb              string
	IsResourceRequest bool
	Path              string
	APIGroup          string
	APIVersion        string
	Resource          string
	Subresource       string
	Namespace         string
	Name              string
}

// Authorizer decides whether a request may run; it is called after
// authentication and before the verb, for every request but the public
// health and version endpoints.
type Authorizer func(ctx context.Context, a AuthorizationAttributes) (d Decision, reason string, err error)

// authorizationAttributes are the attributes of rq.
func authorizationAttributes(r *http.Request, rq *request) AuthorizationAttributes {
	info := rq.info
	return AuthorizationAttributes{User: rq.user, Verb: info.Verb, IsResourceRequest: info.IsResource, Path: r.URL.Path,
		APIGroup: info.Group, APIVersion: info.Version, Resource: info.Resource, Subresource: info.Subresource,
		Namespace: info.Namespace, Name: info.Name}
}

// authorize runs the configured authorizer and, unless it allows the
// request, answers it: 403 with upstream's Forbidden Status, or upstream's
// plain-text 500 when the authorizer failed. No authorizer allows all.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, rq *request) bool {
	if s.cfg.Authorize == nil {
		return true
	}
	attrs := authorizationAttributes(r, rq)
	d, reason, err := s.cfg.Authorize(r.Context(), attrs)
	if d == DecisionAllow {
		_ = rq.record.AddAnnotation("authorization.k8s.io/decision", "allow")
		_ = rq.record.AddAnnotation("authorization.k8s.io/reason", reason)
		return true
	}
	if err != nil {
		_ = rq.record.AddAnnotation("authorization.k8s.io/reason", "internal error")
		s.log.Error("authorizing", "path", r.URL.Path, "err", err)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		http.Error(w, htmlSafe.Replace(fmt.Sprintf("Internal Server Error: %q: %v", r.RequestURI, err)), http.StatusInternalServerError)
		return false
	}
	_ = rq.record.AddAnnotation("authorization.k8s.io/decision", "forbid")
	_ = rq.record.AddAnnotation("authorization.k8s.io/reason", reason)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	writeError(w, r, forbidden(attrs, reason))
	return false
}

// htmlSafe keeps an error text from reading as HTML.
var htmlSafe = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// forbidden is upstream's 403 for a request the authorizer did not allow.
func forbidden(a AuthorizationAttributes, reason string) error {
	msg := htmlSafe.Replace(forbiddenWhat(a))
	if reason != "" {
		msg += ": " + reason
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}, a.Name, fmt.Errorf("%s", msg))
}

// forbiddenWhat says who cannot do what.
func forbiddenWhat(a AuthorizationAttributes) string {
	if !a.IsResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", a.User.Username, a.Verb, a.Path)
	}
	resource := a.Resource
	if a.Subresource != "" {
		resource += "/" + a.Subresource
	}
	if a.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", a.User.Username, a.Verb, resource, a.APIGroup, a.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", a.User.Username, a.Verb, resource, a.APIGroup)
}
