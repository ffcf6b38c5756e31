package auth

import (
	"context"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// AudienceTokenAuthenticator resolves a bearer token presented for some
// audiences, as a TokenReview asks: ok with the user and those of the
// audiences the token is valid for. ok is false with a nil error when the
// token is not of the authenticator's kind, with an error when it is but
// is not valid; the error is shown to the reviewer, so it never contains
// the token.
//
// It is a separate interface from TokenAuthenticator, which request
// authentication uses and which knows nothing of audiences.
type AudienceTokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string, audiences []string) (
		user authenticationv1.UserInfo, tokenAudiences []string, ok bool, err error)
}

// AudienceTokenAuthenticatorFunc adapts a function to
// AudienceTokenAuthenticator.
type AudienceTokenAuthenticatorFunc func(ctx context.Context, token string, audiences []string) (
	authenticationv1.UserInfo, []string, bool, error)

// AuthenticateToken calls f(ctx, token, audiences).
func (f AudienceTokenAuthenticatorFunc) AuthenticateToken(ctx context.Context, token string, audiences []string) (
	authenticationv1.UserInfo, []string, bool, error) {
	return f(ctx, token, audiences)
}

// AudienceAgnostic lets tokens, an authenticator that knows nothing of
// audiences (a token file), answer for audiences the way kube-apiserver
// does: its tokens are valid for the API server's own audiences,
// apiAudiences, and no other. Asked for no audiences, it does not check
// them and reports none.
func AudienceAgnostic(tokens TokenAuthenticator, apiAudiences []string) AudienceTokenAuthenticator {
	apiAudiences = slices.Clone(apiAudiences)
	return AudienceTokenAuthenticatorFunc(func(ctx context.Context, token string, audiences []string) (
		authenticationv1.UserInfo, []string, bool, error) {
		var valid []string
		if len(audiences) > 0 {
			if valid = intersect(apiAudiences, audiences); len(valid) == 0 {
				return authenticationv1.UserInfo{}, nil, false, nil
			}
		}
		user, ok, err := tokens.AuthenticateToken(ctx, token)
		if err != nil || !ok {
			return authenticationv1.UserInfo{}, nil, false, err
		}
		return user, valid, true, nil
	})
}

// TokenReviewer answers token reviews as request authentication would
// answer the token: each authenticator in turn, the first user found wins
// and gets the group system:authenticated. When none finds one, their
// errors are returned together, or "invalid bearer token" when none had
// an error.
func TokenReviewer(auths ...AudienceTokenAuthenticator) AudienceTokenAuthenticator {
	return AudienceTokenAuthenticatorFunc(func(ctx context.Context, token string, audiences []string) (
		authenticationv1.UserInfo, []string, bool, error) {
		var errs []error
		for _, a := range auths {
			user, auds, ok, err := a.AuthenticateToken(ctx, token, audiences)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if ok {
				return withAuthenticated(user), auds, true, nil
			}
		}
		if len(errs) == 0 {
			return authenticationv1.UserInfo{}, nil, false, errInvalidToken
		}
		return authenticationv1.UserInfo{}, nil, false, utilerrors.NewAggregate(errs)
	})
}

// withAuthenticated adds system:authenticated to the groups of user, as
// WithAuthenticatedGroup does.
func withAuthenticated(user authenticationv1.UserInfo) authenticationv1.UserInfo {
	if user.Username != Anonymous && !hasAny(user.Groups, AllAuthenticated, AllUnauthenticated) {
		user.Groups = append(slices.Clip(user.Groups), AllAuthenticated)
	}
	return user
}

// intersect returns the elements of a that are also in b, in a's order.
func intersect(a, b []string) []string {
	var out []string
	for _, s := range a {
		if slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}
