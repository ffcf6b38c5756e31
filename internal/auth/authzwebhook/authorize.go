package authzwebhook

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/admitd/admitd/internal/auth"
)

// Authorize asks the remote authorizer about a, or answers from the cache
// when the same question was answered within its TTL. An answer that
// allows gives DecisionAllow, one that denies DecisionDeny, any other
// DecisionNoOpinion, each with the answer's reason. A failed call gives
// Options.DecisionOnError and the error, which is not cached.
func (w *Authorizer) Authorize(ctx context.Context, a auth.Attributes) (auth.Decision, string, error) {
	spec := specFor(a)
	match, err := w.matches(ctx, spec)
	if err != nil {
		return w.decisionOnError, "", err
	}
	if !match {
		return auth.DecisionNoOpinion, "", nil
	}
	key, err := json.Marshal(spec)
	if err != nil {
		return w.decisionOnError, "", err
	}
	status, ok := w.cached(string(key))
	if !ok {
		var body any = spec
		if w.version == VersionV1beta1 {
			body = v1beta1Spec(spec)
		}
		var result string
		if status, result, err = w.caller.call(ctx, body); err != nil {
			// Failing open is counted unless the request itself is gone.
			if w.decisionOnError == auth.DecisionNoOpinion && ctx.Err() == nil {
				w.metrics.observeFailOpen(w.caller.name, result)
			}
			return w.decisionOnError, "", err
		}
		if cacheable(a) {
			w.remember(string(key), status)
		}
	}
	return decide(status)
}

// matches evaluates the match conditions, recording the evaluation when
// there are any.
func (w *Authorizer) matches(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (bool, error) {
	if w.match == nil {
		return true, nil
	}
	start := time.Now()
	match, errored, err := w.match.eval(ctx, spec)
	w.metrics.observeMatch(w.caller.name, time.Since(start), errored, !match && err == nil)
	return match, err
}

// decide turns an answer into a decision.
func decide(s authorizationv1.SubjectAccessReviewStatus) (auth.Decision, string, error) {
	switch {
	case s.Allowed && s.Denied:
		return auth.DecisionDeny, s.Reason, ErrBothAllowedAndDenied
	case s.Denied:
		return auth.DecisionDeny, s.Reason, nil
	case s.Allowed:
		return auth.DecisionAllow, s.Reason, nil
	}
	return auth.DecisionNoOpinion, s.Reason, nil
}

func (w *Authorizer) cached(key string) (authorizationv1.SubjectAccessReviewStatus, bool) {
	v, ok := w.cache.Get(key)
	if !ok {
		return authorizationv1.SubjectAccessReviewStatus{}, false
	}
	return v.(authorizationv1.SubjectAccessReviewStatus), true
}

// remember caches an answer for the TTL of its kind; a TTL of 0 disables
// caching that kind.
func (w *Authorizer) remember(key string, s authorizationv1.SubjectAccessReviewStatus) {
	ttl := w.unauthorizedTTL
	if s.Allowed {
		ttl = w.authorizedTTL
	}
	if ttl > 0 {
		w.cache.Add(key, s, ttl)
	}
}

// RulesReview cannot list what the remote authorizer allows: the answer is
// incomplete, with upstream's error.
func (w *Authorizer) RulesReview(authenticationv1.UserInfo, string) (
	[]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	return nil, nil, true, errNoRules
}

var errNoRules = errors.New("webhook authorizer does not support user rule resolution")
