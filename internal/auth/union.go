package auth

import (
	"context"
	"slices"
	"strings"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Named is one authorizer of a Union, with the type and name kube-apiserver
// reports it under (in metrics and in reasons): for --authorization-mode,
// the mode and the mode in lower case ("RBAC", "rbac").
type Named struct {
	Type, Name string
	Authorizer
	// Rules lists the authorizer's rules when Authorizer is a wrapper that
	// hides its RulesReviewer (DecisionMetrics.Instrument sets it); nil:
	// Authorizer's own, if it has one.
	Rules RulesReviewer
}

// AuthorizerUnion asks its authorizers in order: the first that allows or denies
// decides, with its reason and error. When all have no opinion, the result
// is no opinion with every reason given, each as "<name>: <reason>", one a
// line, and every error, as upstream's union authorizer.
type AuthorizerUnion []Named

var _ Authorizer = AuthorizerUnion(nil)

// Authorize asks each authorizer in turn.
func (u AuthorizerUnion) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	var (
		reasons []string
		errs    []error
	)
	for _, n := range u {
		d, reason, err := n.Authorize(ctx, a)
		if err != nil {
			errs = append(errs, err)
		}
		if reason != "" {
			reasons = append(reasons, n.Name+": "+reason)
		}
		if d == DecisionAllow || d == DecisionDeny {
			return d, reason, err
		}
	}
	return DecisionNoOpinion, strings.Join(reasons, "\n"), utilerrors.NewAggregate(errs)
}

// PrivilegedGroups allows every request of a member of one of groups and has
// no opinion on others; kube-apiserver puts it, for system:masters, in front
// of every configured authorizer.
func PrivilegedGroups(groups ...string) Authorizer {
	return AuthorizerFunc(func(_ context.Context, a Attributes) (Decision, string, error) {
		for _, g := range a.User.Groups {
			if slices.Contains(groups, g) {
				return DecisionAllow, "", nil
			}
		}
		return DecisionNoOpinion, "", nil
	})
}

// AlwaysAllow is --authorization-mode=AlwaysAllow.
var AlwaysAllow Authorizer = alwaysAllow{}

type alwaysAllow struct{}

func (alwaysAllow) Authorize(context.Context, Attributes) (Decision, string, error) {
	return DecisionAllow, "", nil
}

// AlwaysDeny is --authorization-mode=AlwaysDeny. As upstream's, it has no
// opinion (so a later authorizer may still allow) and says why.
var AlwaysDeny Authorizer = alwaysDeny{}

type alwaysDeny struct{}

func (alwaysDeny) Authorize(context.Context, Attributes) (Decision, string, error) {
	return DecisionNoOpinion, "Everything is forbidden.", nil
}
