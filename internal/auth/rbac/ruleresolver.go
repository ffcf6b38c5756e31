package rbac

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/admitd/admitd/internal/auth"
)

// ReviewRuleResolver is the auth.RuleResolver of a (SelfSubjectRulesReview): the rules of its current
// snapshot, as RulesReview lists them.
func ReviewRuleResolver(a *Authorizer) auth.RuleResolver {
	return auth.RuleResolverFunc(func(_ context.Context, user authenticationv1.UserInfo, namespace string) (
		[]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
		return a.RulesReview(user, namespace)
	})
}
