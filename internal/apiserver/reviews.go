package apiserver

import (
	"context"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
)

// A review is a virtual resource that only answers creates: the request's
// object comes back with its status filled in and nothing is stored, so
// no name is needed and the same review can be sent again. Dry run changes
// nothing, as upstream.
type review struct {
	// check is the review's own validation, run after mutating and before
	// validating admission as upstream's REST storage does; nil checks
	// nothing.
	check func(rq *request, obj runtime.Object) error
	// answer returns the response.
	answer func(s *Server, ctx context.Context, rq *request, obj runtime.Object) (runtime.Object, error)
}

var reviews = map[schema.GroupResource]review{
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       {answer: (*Server).selfSubjectReview},
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             {check: checkTokenReview, answer: (*Server).tokenReview},
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      {check: checkSubjectAccessReview, answer: (*Server).subjectAccessReview},
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: {check: checkLocalSubjectAccessReview, answer: (*Server).localSubjectAccessReview},
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  {check: checkSelfSubjectAccessReview, answer: (*Server).selfSubjectAccessReview},
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   {check: checkSelfSubjectRulesReview, answer: (*Server).selfSubjectRulesReview},
}

// serveReview handles creates of review resources. It reports false when
// the resource is not a review.
func (s *Server) serveReview(w http.ResponseWriter, r *http.Request, rq *request, res *registry.Resource) bool {
	rv, ok := reviews[res.GroupResource()]
	if !ok {
		return false
	}
	out, err := s.review(r, rq, res, rv)
	if err != nil {
		writeError(w, r, err)
		return true
	}
	rq.event.ResponseObject = out
	writeObject(w, r, http.StatusCreated, out)
	return true
}

// review runs a review through upstream's create handler without the
// store: options, decoding, namespace, managedFields, mutating admission,
// the review's checks, validating admission, then the answer.
func (s *Server) review(r *http.Request, rq *request, res *registry.Resource, rv review) (runtime.Object, error) {
	ctx := r.Context()
	opts, err := parseCreateOptions(r)
	if err != nil {
		return nil, err
	}
	obj, err := s.decodeWriteBody(r, rq, res, opts.FieldValidation)
	if err != nil {
		return nil, err
	}
	s.keepRequestObject(rq, obj)
	if err := ensureNamespace(objectNamespace(res, rq.info.Namespace), accessor(obj)); err != nil {
		return nil, err
	}
	res.Default(obj)
	obj = s.recordUpdate(rq, res, nil, obj, opts.FieldManager)
	attrs := s.attributes(rq, res, admission.Create, "", obj, nil, opts, len(opts.DryRun) > 0)
	if err := s.admit(ctx, attrs); err != nil {
		return nil, err
	}
	obj = attrs.Object
	if rv.check != nil {
		if err := rv.check(rq, obj); err != nil {
			return nil, err
		}
	}
	vattrs := *attrs
	vattrs.Object = obj.DeepCopyObject()
	if err := s.validate(ctx, &vattrs); err != nil {
		return nil, err
	}
	return rv.answer(s, ctx, rq, obj)
}
