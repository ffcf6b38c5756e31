package apiserver

import (
	"context"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
)

// reviewHandler answers a create of a virtual review resource: nothing is
// stored, the response is the request with its status filled in.
type reviewHandler func(ctx context.Context, rq *request, obj runtime.Object) (runtime.Object, error)

var reviewHandlers = map[schema.GroupResource]reviewHandler{
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:      selfSubjectReview,
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}: selfSubjectAccessReview,
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:  selfSubjectRulesReview,
}

// serveReview handles creates of review resources. It reports false when
// the resource is not a review.
func (s *Server) serveReview(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) bool {
	h, ok := reviewHandlers[res.GroupResource()]
	if !ok {
		return false
	}
	obj, err := s.decodeWriteBody(r, rq, res, "")
	if err == nil {
		attrs := s.attributes(rq, res, admission.Create, "", obj, nil, nil, false)
		if err = s.admit(r.Context(), attrs); err == nil {
			err = s.validate(r.Context(), attrs)
		}
	}
	if err == nil {
		obj, err = h(r.Context(), rq, obj)
	}
	if err != nil {
		writeError(w, r, err)
		return true
	}
	writeObject(w, r, http.StatusCreated, obj)
	return true
}

func selfSubjectReview(_ context.Context, rq *request, obj runtime.Object) (runtime.Object, error) {
	review := obj.(*authenticationv1.SelfSubjectReview)
	review.Status.UserInfo = rq.user
	return review, nil
}

// selfSubjectAccessReview answers `kubectl auth can-i`; with AlwaysAllow
// every action is allowed.
func selfSubjectAccessReview(_ context.Context, _ *request, obj runtime.Object) (runtime.Object, error) {
	review := obj.(*authorizationv1.SelfSubjectAccessReview)
	review.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true}
	return review, nil
}

func selfSubjectRulesReview(_ context.Context, _ *request, obj runtime.Object) (runtime.Object, error) {
	review := obj.(*authorizationv1.SelfSubjectRulesReview)
	review.Status = authorizationv1.SubjectRulesReviewStatus{
		ResourceRules:    []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		NonResourceRules: []authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
	}
	return review, nil
}
