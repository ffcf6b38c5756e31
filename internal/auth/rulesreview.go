package auth

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// RulesReviewer lists what a user may do in a namespace, as upstream's
// authorizer.RuleResolver: the answer of a SelfSubjectRulesReview.
// incomplete says that the authorizer may allow more than it lists.
// rbac.Authorizer, AlwaysAllow, AlwaysDeny and AuthorizerUnion implement it.
type RulesReviewer interface {
	RulesReview(user authenticationv1.UserInfo, namespace string) (
		resource []authorizationv1.ResourceRule, nonResource []authorizationv1.NonResourceRule, incomplete bool, err error)
}

var (
	_ RulesReviewer = AuthorizerUnion(nil)
	_ RulesReviewer = alwaysAllow{}
	_ RulesReviewer = alwaysDeny{}
)

// RulesReview gathers the rules of every member that lists them (the
// system:masters authorizer does not), incomplete if any member's is, with
// every error, as upstream's union of rule resolvers.
func (u AuthorizerUnion) RulesReview(user authenticationv1.UserInfo, namespace string) (
	[]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	var (
		resource    []authorizationv1.ResourceRule
		nonResource []authorizationv1.NonResourceRule
		incomplete  bool
		errs        []error
	)
	for _, n := range u {
		r := n.Rules
		if r == nil {
			r, _ = n.Authorizer.(RulesReviewer)
		}
		if r == nil {
			continue
		}
		res, non, inc, err := r.RulesReview(user, namespace)
		resource, nonResource = append(resource, res...), append(nonResource, non...)
		incomplete = incomplete || inc
		if err != nil {
			errs = append(errs, err)
		}
	}
	return resource, nonResource, incomplete, utilerrors.NewAggregate(errs)
}

// RulesReview: everything.
func (alwaysAllow) RulesReview(authenticationv1.UserInfo, string) (
	[]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	return []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		[]authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}, false, nil
}

// RulesReview: nothing.
func (alwaysDeny) RulesReview(authenticationv1.UserInfo, string) (
	[]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	return []authorizationv1.ResourceRule{}, []authorizationv1.NonResourceRule{}, false, nil
}
