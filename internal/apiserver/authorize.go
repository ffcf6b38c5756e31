package apiserver

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/admitd/admitd/internal/auth"
)

// authorizationAttributes are the attributes of rq.
func authorizationAttributes(r *http.Request, rq *request) auth.Attributes {
	info := rq.info
	a := auth.Attributes{User: rq.user, Verb: info.kubeVerb(r), ResourceRequest: info.IsResource, Path: r.URL.Path,
		APIGroup: info.Group, APIVersion: info.Version, Resource: info.Resource, Subresource: info.Subresource,
		Namespace: info.Namespace, Name: info.objectName()}
	if info.IsResource && !info.WatchPath && (a.Verb == "list" || a.Verb == "watch" || a.Verb == "deletecollection") {
		a.FieldSelector, a.LabelSelector = requestSelectors(r, info)
	}
	return a
}

// requestSelectors are the field and label selectors of a list, watch or
// collection delete, as upstream's authorization attributes carry them
// (AuthorizeWithSelectors): the Node authorizer lets a kubelet list the
// ResourceSlices of its node by spec.nodeName. A selector that does not
// parse narrows nothing. The field selector is the one parseRequestInfo
// read.
func requestSelectors(r *http.Request, info *requestInfo) (fields.Requirements, labels.Requirements) {
	var fr fields.Requirements
	var lr labels.Requirements
	if info.FieldSelector != nil {
		fr = info.FieldSelector.Requirements()
	}
	if !strings.Contains(r.URL.RawQuery, "labelSelector") {
		return fr, lr
	}
	if v, ok := r.URL.Query()["labelSelector"]; ok && len(v) > 0 {
		if sel, err := labels.Parse(v[0]); err == nil {
			lr, _ = sel.Requirements()
		}
	}
	return fr, lr
}

// authorize runs the configured authorizer and, unless it allows the
// request, answers it: 403 with upstream's Forbidden Status, or upstream's
// plain-text 500 when the authorizer failed. No authorizer allows all.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, rq *request) bool {
	if s.cfg.Authorizer == nil {
		s.cfg.AuthorizationAttempts.Observe(auth.DecisionAllow, nil, 0)
		return true
	}
	attrs := authorizationAttributes(r, rq)
	start := time.Now()
	d, reason, err := s.cfg.Authorizer.Authorize(r.Context(), attrs)
	s.cfg.AuthorizationAttempts.Observe(d, err, time.Since(start))
	if d == auth.DecisionAllow {
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
	writeError(w, r, auth.Forbidden(attrs, reason))
	return false
}

// htmlSafe keeps an error text from reading as HTML.
var htmlSafe = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// RequestAttributes are the authorization attributes of a request this
// server is serving, without the user: what an Authenticate function needs
// to authorize impersonation (the impersonate-on:<mode>:<verb> checks of
// constrained impersonation ask about the request itself). ok is false for
// a request the server did not parse.
func RequestAttributes(r *http.Request) (a auth.Attributes, ok bool) {
	rq := requestFrom(r.Context())
	if rq == nil {
		return auth.Attributes{Path: r.URL.Path}, false
	}
	a = authorizationAttributes(r, rq)
	a.User = authenticationv1.UserInfo{}
	return a, true
}
