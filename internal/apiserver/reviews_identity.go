package apiserver

import (
	"context"
	"errors"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/auth"
)

// selfSubjectReview answers `kubectl auth whoami`: a new object holding
// the requesting user, created now.
func (s *Server) selfSubjectReview(_ context.Context, rq *request, obj runtime.Object) (runtime.Object, error) {
	user := rq.user
	extra := make(map[string]authenticationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = v
	}
	user.Extra = extra
	return &authenticationv1.SelfSubjectReview{
		TypeMeta:   typeMetaOf(obj),
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(s.cfg.Now())},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: user},
	}, nil
}

// selfSubjectRulesReview answers `kubectl auth can-i --list`: a new object
// with the rules of the requesting user in spec.namespace.
func (s *Server) selfSubjectRulesReview(ctx context.Context, rq *request, obj runtime.Object) (runtime.Object, error) {
	ns := obj.(*authorizationv1.SelfSubjectRulesReview).Spec.Namespace
	var status authorizationv1.SubjectRulesReviewStatus
	var err error
	authorizer := s.cfg.Authorizer
	if authorizer == nil {
		authorizer = auth.AlwaysAllow
	}
	if rules, ok := authorizer.(auth.RulesReviewer); ok {
		status.ResourceRules, status.NonResourceRules, status.Incomplete, err = rules.RulesReview(rq.user, ns)
	} else {
		status.Incomplete = true
	}
	if err != nil {
		status.EvaluationError = err.Error()
	}
	// Upstream always lists both, if only as [].
	if status.ResourceRules == nil {
		status.ResourceRules = []authorizationv1.ResourceRule{}
	}
	if status.NonResourceRules == nil {
		status.NonResourceRules = []authorizationv1.NonResourceRule{}
	}
	return &authorizationv1.SelfSubjectRulesReview{TypeMeta: typeMetaOf(obj), Status: status}, nil
}

// typeMetaOf is the kind and version of the request's object, for the new
// object answered in its place.
func typeMetaOf(obj runtime.Object) metav1.TypeMeta {
	apiVersion, kind := obj.GetObjectKind().GroupVersionKind().ToAPIVersionAndKind()
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func checkTokenReview(rq *request, obj runtime.Object) error {
	if ns := rq.info.Namespace; ns != "" {
		return apierrors.NewBadRequest(fmt.Sprintf("namespace is not allowed on this type: %v", ns))
	}
	if obj.(*authenticationv1.TokenReview).Spec.Token == "" {
		return apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	return nil
}

// errTokenAudiences is upstream's answer when an authenticator accepts a
// token for audiences other than those asked for.
var errTokenAudiences = apierrors.NewInternalError(errors.New("error validating audiences"))

// tokenReview authenticates spec.token for spec.audiences, by default the
// API server's own audiences, with Config.TokenAuthenticator and the
// server's service-account tokens.
func (s *Server) tokenReview(ctx context.Context, _ *request, obj runtime.Object) (runtime.Object, error) {
	tr := obj.(*authenticationv1.TokenReview)
	auds := tr.Spec.Audiences
	if len(auds) == 0 {
		auds = s.tokens.Audiences
	}
	user, tokenAuds, ok, err := s.tokenReviewer().AuthenticateToken(ctx, tr.Spec.Token, auds)
	tr.Status.Authenticated = ok
	if err != nil {
		tr.Status.Error = err.Error()
	}
	if !ok {
		return tr, nil
	}
	if len(auds) > 0 && len(intersectAudiences(auds, tokenAuds)) == 0 {
		s.log.Error("token review: authenticator accepted a token for other audiences", "want", auds, "got", tokenAuds)
		return nil, errTokenAudiences
	}
	tr.Status.User = user
	tr.Status.Audiences = tokenAuds
	return tr, nil
}

func intersectAudiences(a, b []string) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			if x == y {
				out = append(out, x)
			}
		}
	}
	return out
}
