package rbac

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
)

// RulesReview returns the rules bound to user in namespace in the shape of a
// SubjectRulesReview's status, as kube-apiserver's RBAC authorizer gives them
// to SelfSubjectRulesReview: a rule with resources becomes a resource rule, a
// rule with nonResourceURLs a non-resource rule (a rule with both, both).
// RBAC's answer is never incomplete; err reports role references that could
// not be resolved (the status's evaluationError), the rules being valid
// regardless.
func (s *Snapshot) RulesReview(user authenticationv1.UserInfo, namespace string) (
	resource []authorizationv1.ResourceRule, nonResource []authorizationv1.NonResourceRule, incomplete bool, err error) {
	rules, err := s.RulesFor(user, namespace)
	for _, r := range rules {
		if len(r.Resources) > 0 {
			resource = append(resource, authorizationv1.ResourceRule{Verbs: r.Verbs, APIGroups: r.APIGroups,
				Resources: r.Resources, ResourceNames: r.ResourceNames})
		}
		if len(r.NonResourceURLs) > 0 {
			nonResource = append(nonResource, authorizationv1.NonResourceRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
		}
	}
	return resource, nonResource, false, err
}
