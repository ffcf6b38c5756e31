package server

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/pki"
	"github.com/admitd/admitd/pkg/admission"
)

// clientCABundle is the PEM bundle of client CAs: the generated CA, then
// --client-ca-file's.
func clientCABundle(o Options, bundle pki.Bundle) ([]byte, error) {
	out := append([]byte(nil), bundle.CA.CertPEM...)
	if o.ClientCAFile == "" {
		return out, nil
	}
	data, err := os.ReadFile(o.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("reading --client-ca-file: %w", err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("--client-ca-file %s holds no PEM certificates", o.ClientCAFile)
	}
	return append(out, data...), nil
}

// newAuthenticator returns the request authentication of the server: front
// proxies (requestHeader, when set), x509 client certificates (clientCA),
// bearer tokens from --token-auth-file then service-account tokens (sa),
// optionally anonymous, then impersonation, which authz authorizes. Each
// attempt is counted in metrics (impersonation is not part of it).
func newAuthenticator(o Options, clientCA []byte, requestHeader *auth.RequestHeaderOptions, authz auth.Authorizer, sa []auth.AudienceTokenAuthenticator, metrics *auth.AuthenticationMetrics) (func(*http.Request) (authenticationv1.UserInfo, *authenticationv1.UserInfo, error), error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(clientCA)
	opts := auth.Options{X509: auth.NewX509(pool).CountLifetimes(metrics), Anonymous: o.AnonymousAuth, AnonymousPaths: apiserver.HealthPaths}
	if requestHeader != nil {
		opts.RequestHeader = auth.NewRequestHeader(*requestHeader)
	}
	if o.TokenAuthFile != "" {
		tokens, err := auth.LoadTokenFile(o.TokenAuthFile, o.Logger)
		if err != nil {
			return nil, err
		}
		opts.Tokens = tokens
	}
	opts.Tokens = withServiceAccountTokens(opts.Tokens, sa)
	authn, err := auth.New(opts)
	if err != nil {
		return nil, err
	}
	imp := auth.NewImpersonator(authz)
	return func(r *http.Request) (authenticationv1.UserInfo, *authenticationv1.UserInfo, error) {
		start := time.Now()
		u, ok, err := authn.Authenticate(r)
		metrics.Observe(auth.ResultOf(ok, err), u.Username, time.Since(start))
		if err != nil || !ok {
			if err != nil {
				o.Logger.Debug("authentication failed", "err", err)
			}
			return authenticationv1.UserInfo{}, nil, auth.Unauthorized()
		}
		attrs, _ := apiserver.RequestAttributes(r)
		attrs.User = u
		user, impersonating, err := imp.Impersonate(r.Context(), r.Header, attrs)
		if err != nil || !impersonating {
			return user, nil, err
		}
		return user, &u, nil
	}, nil
}

// admissionAuthorizer lets admission (CEL's authorizer variable) ask the
// server's authorizer.
func admissionAuthorizer(a auth.Authorizer) admission.Authorizer {
	return admission.AuthorizerFunc(func(ctx context.Context, x admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
		d, reason, err := a.Authorize(ctx, auth.Attributes{User: x.User, Verb: x.Verb, ResourceRequest: x.ResourceRequest,
			APIGroup: x.APIGroup, APIVersion: x.APIVersion, Resource: x.Resource, Subresource: x.Subresource,
			Namespace: x.Namespace, Name: x.Name, Path: x.Path})
		return admission.AuthorizationDecision(d), reason, err
	})
}
