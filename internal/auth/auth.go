// Package auth decides who makes a request to admitd's HTTPS API and who it
// acts as: authentication from x509 client certificates (--client-ca-file),
// a static token file (--token-auth-file) and, when enabled, anonymous
// access; then impersonation through the Impersonate-* headers, with the
// authorization contract (Attributes, Authorizer) that impersonation and the
// server's authorization step share.
//
// It follows kube-apiserver 1.37 (k8s.io/apiserver/pkg/authentication and
// pkg/endpoints/filters/impersonation): the same chain order, the same
// groups, the same client-facing errors. It is not an HTTP filter: the server
// calls Authenticate and Impersonator.Impersonate and writes the returned
// Status errors itself. Service-account tokens are checked by
// internal/serviceaccount and join the bearer tokens through TokenUnion and
// ForAPIAudiences; front proxies assert users in request headers
// (RequestHeaderAuthenticator). OIDC and webhook authentication are not
// implemented.
package auth

import (
	"errors"
	"net/http"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Well-known user and group names, as upstream's authentication/user package.
const (
	Anonymous          = "system:anonymous"
	AllAuthenticated   = "system:authenticated"
	AllUnauthenticated = "system:unauthenticated"
	SystemPrivileged   = "system:masters"
	NodesGroup         = "system:nodes"
	// CredentialIDKey is the extra key under which authenticators record
	// an identifier of the credential used (x509: its SHA-256 fingerprint).
	CredentialIDKey = "authentication.kubernetes.io/credential-id"
)

// Authenticator finds the user a request comes from. ok is false, with a
// nil error, when the request carries no credential of the authenticator's
// kind; a non-nil error means a credential was presented and rejected.
type Authenticator interface {
	Authenticate(r *http.Request) (user authenticationv1.UserInfo, ok bool, err error)
}

// AuthenticatorFunc adapts a function to Authenticator.
type AuthenticatorFunc func(r *http.Request) (authenticationv1.UserInfo, bool, error)

// Authenticate calls f(r).
func (f AuthenticatorFunc) Authenticate(r *http.Request) (authenticationv1.UserInfo, bool, error) {
	return f(r)
}

// Union tries each authenticator in turn and returns the first user found.
// An authenticator that fails does not stop the others; if none finds a
// user, the errors of all are returned together.
func Union(auths ...Authenticator) Authenticator {
	return union{auths: auths}
}

// UnionFailOnError is Union, except that the first error ends the search.
// It is how anonymous access is appended: a rejected credential must stay
// rejected rather than fall back to system:anonymous.
func UnionFailOnError(auths ...Authenticator) Authenticator {
	return union{auths: auths, failOnError: true}
}

type union struct {
	auths       []Authenticator
	failOnError bool
}

func (u union) Authenticate(r *http.Request) (authenticationv1.UserInfo, bool, error) {
	var errs []error
	for _, a := range u.auths {
		user, ok, err := a.Authenticate(r)
		if err != nil {
			if u.failOnError {
				return authenticationv1.UserInfo{}, false, err
			}
			errs = append(errs, err)
			continue
		}
		if ok {
			return user, true, nil
		}
	}
	return authenticationv1.UserInfo{}, false, utilerrors.NewAggregate(errs)
}

// WithAuthenticatedGroup appends system:authenticated to the groups of every
// user a finds, unless the user is system:anonymous or already carries
// system:authenticated or system:unauthenticated.
func WithAuthenticatedGroup(a Authenticator) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (authenticationv1.UserInfo, bool, error) {
		user, ok, err := a.Authenticate(r)
		if err != nil || !ok {
			return authenticationv1.UserInfo{}, ok, err
		}
		if user.Username == Anonymous || hasAny(user.Groups, AllAuthenticated, AllUnauthenticated) {
			return user, true, nil
		}
		groups := make([]string, 0, len(user.Groups)+1)
		user.Groups = append(append(groups, user.Groups...), AllAuthenticated)
		return user, true, nil
	})
}

// AnonymousAuthenticator authenticates every request as system:anonymous in
// group system:unauthenticated.
func AnonymousAuthenticator() Authenticator {
	return AuthenticatorFunc(func(*http.Request) (authenticationv1.UserInfo, bool, error) {
		return authenticationv1.UserInfo{Username: Anonymous, Groups: []string{AllUnauthenticated}}, true, nil
	})
}

// Options selects the authenticators New chains. A nil field disables its
// method.
type Options struct {
	// RequestHeader authenticates front proxies (--requestheader-*).
	RequestHeader *RequestHeaderAuthenticator
	// X509 authenticates client certificates (--client-ca-file).
	X509 *X509Authenticator
	// Tokens resolves bearer tokens (--token-auth-file).
	Tokens TokenAuthenticator
	// Anonymous lets requests without credentials in as system:anonymous
	// (--anonymous-auth). Default false; kube-apiserver's flag defaults to
	// true, which is for the CLI to decide.
	Anonymous bool
	// AnonymousPaths, when Anonymous is false, are the exact paths on
	// which a request without credentials is still system:anonymous (as
	// kube-apiserver's AuthenticationConfiguration anonymous conditions):
	// what it may then do is for the authorizer to say. A rejected
	// credential stays rejected there too.
	AnonymousPaths []string
}

// New builds the request authenticator the way kube-apiserver does: front
// proxy, x509 then bearer token, with system:authenticated added to
// whoever they find, and anonymous last, reached only when no credential
// was presented.
func New(o Options) (Authenticator, error) {
	var auths []Authenticator
	if o.RequestHeader != nil {
		auths = append(auths, o.RequestHeader)
	}
	if o.X509 != nil {
		auths = append(auths, o.X509)
	}
	if o.Tokens != nil {
		auths = append(auths, BearerToken(o.Tokens))
	}
	anonymous := anonymousOf(o)
	if len(auths) == 0 {
		if anonymous != nil {
			return anonymous, nil
		}
		return nil, errors.New("no authentication method configured")
	}
	a := WithAuthenticatedGroup(Union(auths...))
	if anonymous != nil {
		a = UnionFailOnError(a, anonymous)
	}
	return a, nil
}

// anonymousOf is the anonymous authenticator o asks for: on every path,
// on AnonymousPaths only, or none.
func anonymousOf(o Options) Authenticator {
	if o.Anonymous {
		return AnonymousAuthenticator()
	}
	if len(o.AnonymousPaths) == 0 {
		return nil
	}
	paths := slices.Clone(o.AnonymousPaths)
	anonymous := AnonymousAuthenticator()
	return AuthenticatorFunc(func(r *http.Request) (authenticationv1.UserInfo, bool, error) {
		if !slices.Contains(paths, r.URL.Path) {
			return authenticationv1.UserInfo{}, false, nil
		}
		return anonymous.Authenticate(r)
	})
}

// Unauthorized returns the error the server answers with when
// authentication fails, whatever the cause: 401 with message and reason
// "Unauthorized". The cause stays in the server's log, never in the reply.
func Unauthorized() *apierrors.StatusError {
	err := apierrors.NewUnauthorized("Unauthorized")
	err.ErrStatus.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	return err
}

func hasAny(groups []string, names ...string) bool {
	for _, g := range groups {
		for _, n := range names {
			if g == n {
				return true
			}
		}
	}
	return false
}
