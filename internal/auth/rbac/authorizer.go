package rbac

import (
	"context"
	"sync/atomic"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/admitd/admitd/internal/auth"
)

var (
	_ auth.Authorizer = (*Authorizer)(nil)
	_ auth.Authorizer = (*Snapshot)(nil)
	_ RuleResolver    = (*Snapshot)(nil)
)

// Authorizer answers from the Snapshot it currently holds. A new Snapshot
// replaces the old one atomically; decisions in flight finish on the old one.
// The zero value holds no snapshot and has no opinion on anything.
type Authorizer struct {
	current atomic.Pointer[Snapshot]
}

// New returns an Authorizer holding s (nil: an empty policy).
func New(s *Snapshot) *Authorizer {
	a := &Authorizer{}
	a.Store(s)
	return a
}

// Store makes s the snapshot later decisions read.
func (a *Authorizer) Store(s *Snapshot) { a.current.Store(s) }

// Snapshot returns the snapshot decisions currently read; nil when none was
// stored.
func (a *Authorizer) Snapshot() *Snapshot { return a.current.Load() }

// Authorize decides attrs with the current snapshot.
func (a *Authorizer) Authorize(ctx context.Context, attrs auth.Attributes) (auth.Decision, string, error) {
	return a.current.Load().Authorize(ctx, attrs)
}

// RulesFor returns RulesFor of the current snapshot.
func (a *Authorizer) RulesFor(user authenticationv1.UserInfo, namespace string) ([]rbacv1.PolicyRule, error) {
	return a.current.Load().RulesFor(user, namespace)
}

// RulesReview returns RulesReview of the current snapshot.
func (a *Authorizer) RulesReview(user authenticationv1.UserInfo, namespace string) (
	[]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	return a.current.Load().RulesReview(user, namespace)
}

// Authorize allows attrs when a rule bound to its user permits it, with the
// reason `RBAC: allowed by <binding>`. Otherwise it has no opinion; the
// reason then lists the role references that could not be resolved, if any,
// as `RBAC: <errors>`. It never denies and never returns an error, as
// kube-apiserver's RBAC authorizer. A nil Snapshot is an empty policy.
func (s *Snapshot) Authorize(_ context.Context, attrs auth.Attributes) (auth.Decision, string, error) {
	var (
		reason string
		errs   []error
	)
	s.visit(&attrs.User, attrs.Namespace, func(b *binding, subj *rbacv1.Subject, rule *rbacv1.PolicyRule, err error) bool {
		if rule != nil && RuleAllows(attrs, rule) {
			reason = "RBAC: allowed by " + b.describe(subj)
			return false
		}
		if err != nil {
			errs = append(errs, err)
		}
		return true
	})
	if reason != "" {
		return auth.DecisionAllow, reason, nil
	}
	if len(errs) > 0 {
		return auth.DecisionNoOpinion, "RBAC: " + utilerrors.NewAggregate(errs).Error(), nil
	}
	return auth.DecisionNoOpinion, "", nil
}

// RulesFor returns every rule bound to user in namespace: the rules of the
// ClusterRoleBindings, then, when namespace is not empty, those of the
// RoleBindings there. The error aggregates the role references that could not
// be resolved; the rules returned are valid regardless, since rules only ever
// grant. It is what SelfSubjectRulesReview reads.
func (s *Snapshot) RulesFor(user authenticationv1.UserInfo, namespace string) ([]rbacv1.PolicyRule, error) {
	return s.rulesFor(user, namespace, listerErrors)
}

func (s *Snapshot) rulesFor(user authenticationv1.UserInfo, namespace string, style errStyle) ([]rbacv1.PolicyRule, error) {
	var (
		rules []rbacv1.PolicyRule
		errs  []error
	)
	s.visit(&user, namespace, func(b *binding, _ *rbacv1.Subject, rule *rbacv1.PolicyRule, err error) bool {
		if rule != nil {
			rules = append(rules, *rule)
		}
		if err != nil {
			if style != listerErrors {
				_, err = s.roles.resolve(b.roleRef, b.namespace, style)
			}
			errs = append(errs, err)
		}
		return true
	})
	return rules, utilerrors.NewAggregate(errs)
}
