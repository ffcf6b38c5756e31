package apiserver

import (
	"context"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/auth"
)

func (s *Server) subjectAccessReview(ctx context.Context, _ *request, obj runtime.Object) (runtime.Object, error) {
	sar := obj.(*authorizationv1.SubjectAccessReview)
	sar.Status = s.decideAccess(ctx, specUser(sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	return sar, nil
}

func (s *Server) localSubjectAccessReview(ctx context.Context, _ *request, obj runtime.Object) (runtime.Object, error) {
	sar := obj.(*authorizationv1.LocalSubjectAccessReview)
	sar.Status = s.decideAccess(ctx, specUser(sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	return sar, nil
}

// selfSubjectAccessReview answers `kubectl auth can-i` for the user the
// request acts as.
func (s *Server) selfSubjectAccessReview(ctx context.Context, rq *request, obj runtime.Object) (runtime.Object, error) {
	sar := obj.(*authorizationv1.SelfSubjectAccessReview)
	sar.Status = s.decideAccess(ctx, rq.user, sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	return sar, nil
}

// specUser is the user a SubjectAccessReview asks about.
func specUser(spec authorizationv1.SubjectAccessReviewSpec) authenticationv1.UserInfo {
	user := authenticationv1.UserInfo{Username: spec.User, UID: spec.UID, Groups: spec.Groups}
	if spec.Extra != nil {
		user.Extra = make(map[string]authenticationv1.ExtraValue, len(spec.Extra))
		for k, v := range spec.Extra {
			user.Extra[k] = authenticationv1.ExtraValue(v)
		}
	}
	return user
}

// decideAccess asks the authorizer (nil: allow all) whether user may do
// what exactly one of res and nonRes describes. Allow is allowed, Deny is
// denied and no opinion is neither; evaluationError joins the authorizer's
// error with notes on selectors that did not parse.
func (s *Server) decideAccess(ctx context.Context, user authenticationv1.UserInfo,
	res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) authorizationv1.SubjectAccessReviewStatus {
	var attrs auth.Attributes
	var notes []string
	if res != nil {
		attrs, notes = resourceAttributes(user, res)
	} else {
		attrs = auth.Attributes{User: user, Verb: nonRes.Verb, Path: nonRes.Path}
	}
	d, reason, err := auth.DecisionAllow, "", error(nil)
	if s.cfg.Authorizer != nil {
		d, reason, err = s.cfg.Authorizer.Authorize(ctx, attrs)
	}
	if err != nil {
		notes = append([]string{err.Error()}, notes...)
	}
	return authorizationv1.SubjectAccessReviewStatus{Allowed: d == auth.DecisionAllow, Denied: d == auth.DecisionDeny,
		Reason: reason, EvaluationError: strings.Join(notes, "; ")}
}

// resourceAttributes are the attributes of a resource request; an empty
// version is every version. notes say which selectors were (partially)
// ignored because they did not parse.
func resourceAttributes(user authenticationv1.UserInfo, ra *authorizationv1.ResourceAttributes) (auth.Attributes, []string) {
	version := ra.Version
	if version == "" {
		version = "*"
	}
	attrs := auth.Attributes{User: user, Verb: ra.Verb, ResourceRequest: true, APIGroup: ra.Group, APIVersion: version,
		Resource: ra.Resource, Subresource: ra.Subresource, Namespace: ra.Namespace, Name: ra.Name}
	var notes []string
	if fs := ra.FieldSelector; fs != nil {
		var err error
		attrs.FieldSelector, err = fieldRequirements(fs)
		notes = appendSelectorNote(notes, "fieldSelector", len(attrs.FieldSelector), err)
	}
	if ls := ra.LabelSelector; ls != nil {
		var err error
		attrs.LabelSelector, err = labelRequirements(ls)
		notes = appendSelectorNote(notes, "labelSelector", len(attrs.LabelSelector), err)
	}
	return attrs, notes
}

func appendSelectorNote(notes []string, name string, parsed int, err error) []string {
	switch {
	case err == nil:
		return notes
	case parsed > 0:
		return append(notes, "spec.resourceAttributes."+name+" partially ignored due to parse error")
	}
	return append(notes, "spec.resourceAttributes."+name+" ignored due to parse error")
}
