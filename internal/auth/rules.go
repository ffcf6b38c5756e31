package auth

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
)

// RuleResolver lists what a user may do in a namespace, the answer of a
// SelfSubjectRulesReview (`kubectl auth can-i --list`). incomplete is true
// when some of the user's permissions cannot be listed as rules (an
// authorizer that decides without them, such as a webhook); err reports
// rules that could not be evaluated, while the others are still returned.
type RuleResolver interface {
	RulesFor(ctx context.Context, user authenticationv1.UserInfo, namespace string) (
		resourceRules []authorizationv1.ResourceRule, nonResourceRules []authorizationv1.NonResourceRule, incomplete bool, err error)
}

// RuleResolverFunc adapts a function to RuleResolver.
type RuleResolverFunc func(ctx context.Context, user authenticationv1.UserInfo, namespace string) (
	[]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error)

// RulesFor calls f(ctx, user, namespace).
func (f RuleResolverFunc) RulesFor(ctx context.Context, user authenticationv1.UserInfo, namespace string) (
	[]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	return f(ctx, user, namespace)
}

// AllowAllRules are the rules of the AlwaysAllow authorizer: every verb on
// every resource and every non-resource URL.
func AllowAllRules() ([]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule) {
	return []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		[]authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}
}
