package auth

import (
	"context"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// AudienceTokenAuthenticator resolves a bearer token presented for some
// audiences, as a TokenReview asks: ok with the user and those of the
// audiences the token is valid for. ok is false with a non-nil error when
// the token is not valid (for these audiences); the error is shown to the
// reviewer, so it never contains the token.
//
// It is a separate interface from TokenAuthenticator, which request
// authentication uses and which knows nothing of audiences.
type AudienceTokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string, audiences []string) (
		user authenticationv1.UserInfo, tokenAudiences []string, ok bool, err error)
}

// TokenReviewer answers token reviews from tokens, an authenticator that
// knows nothing of audiences (a token file), the way kube-apiserver does:
// such a token is valid for the API server's own audiences, apiAudiences,
// and no other. Asked for no audiences, it does not check them and reports
// none. A user found gets the group system:authenticated, as in request
// authentication; an unknown token is the error "invalid bearer token".
func TokenReviewer(tokens TokenAuthenticator, apiAudiences []string) AudienceTokenAuthenticator {
	return tokenReviewer{tokens: tokens, apiAudiences: slices.Clone(apiAudiences)}
}

type tokenReviewer struct {
	tokens       TokenAuthenticator
	apiAudiences []string
}

func (t tokenReviewer) AuthenticateToken(ctx context.Context, token string, audiences []string) (
	authenticationv1.UserInfo, []string, bool, error) {
	var valid []string
	if len(audiences) > 0 {
		valid = intersect(t.apiAudiences, audiences)
		if len(valid) == 0 {
			return authenticationv1.UserInfo{}, nil, false, errInvalidToken
		}
	}
	user, ok, err := t.tokens.AuthenticateToken(ctx, token)
	if err != nil || !ok {
		if err == nil {
			err = errInvalidToken
		}
		return authenticationv1.UserInfo{}, nil, false, err
	}
	if user.Username != Anonymous && !hasAny(user.Groups, AllAuthenticated, AllUnauthenticated) {
		user.Groups = append(slices.Clip(user.Groups), AllAuthenticated)
	}
	return user, valid, true, nil
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
