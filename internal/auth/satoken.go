package auth

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// ForAPIAudiences lets an audience-aware authenticator (service-account
// tokens) authenticate requests: asked for no audiences, it accepts the
// tokens valid for the API server's own, as kube-apiserver's request
// authentication does.
func ForAPIAudiences(a AudienceTokenAuthenticator) TokenAuthenticator {
	return tokenFunc(func(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
		user, _, ok, err := a.AuthenticateToken(ctx, token, nil)
		return user, ok, err
	})
}

// TokenUnion tries each token authenticator in turn; the first user found
// wins. When none finds one, their errors are returned together (nil when
// none had an error: the token is unknown). nil members are skipped.
func TokenUnion(tokens ...TokenAuthenticator) TokenAuthenticator {
	return tokenFunc(func(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
		var errs []error
		for _, t := range tokens {
			if t == nil {
				continue
			}
			user, ok, err := t.AuthenticateToken(ctx, token)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if ok {
				return user, true, nil
			}
		}
		return authenticationv1.UserInfo{}, false, utilerrors.NewAggregate(errs)
	})
}

type tokenFunc func(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error)

func (f tokenFunc) AuthenticateToken(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	return f(ctx, token)
}
