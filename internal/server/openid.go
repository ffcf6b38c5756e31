package server

import (
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/serviceaccount"
)

// openID serves the service-account issuer discovery documents
// (/.well-known/openid-configuration and /openid/v1/jwks). They are
// ordinary non-resource paths: authenticated and authorized like any other
// (upstream grants them to system:service-account-issuer-discovery).
type openID struct {
	tokens *saTokens
	meta   atomic.Pointer[serviceaccount.OpenIDMetadata]
}

// openIDRoutes returns the discovery handlers, or none when the signing
// issuer is not an https URL (discovery is off, as upstream).
func openIDRoutes(t *saTokens, log *slog.Logger) (*openID, map[string]http.Handler) {
	o := &openID{tokens: t}
	// The address is known once listening; check the rest now.
	if _, err := o.build("placeholder:443"); err != nil {
		log.Info("service account issuer discovery is off", "reason", err)
		return o, nil
	}
	config := o.handler(serviceaccount.OpenIDConfigPath, "application/json", func(m *serviceaccount.OpenIDMetadata) []byte { return m.Config })
	keys := o.handler(serviceaccount.JWKSPath, "application/jwk-set+json", func(m *serviceaccount.OpenIDMetadata) []byte { return m.KeySet })
	// kube-apiserver's routes take the paths with a slash at the end too
	return o, map[string]http.Handler{
		serviceaccount.OpenIDConfigPath: config, serviceaccount.OpenIDConfigPath + "/": config,
		serviceaccount.JWKSPath: keys, serviceaccount.JWKSPath + "/": keys,
	}
}

func (o *openID) build(address string) (*serviceaccount.OpenIDMetadata, error) {
	return serviceaccount.NewOpenIDMetadata(o.tokens.issuer.Issuer, o.tokens.opts.JWKSURI, address, o.tokens.keys)
}

// listening builds the documents for the server's address (host:port):
// the default jwks_uri is https://<address>/openid/v1/jwks.
func (o *openID) listening(address string) {
	if m, err := o.build(address); err == nil {
		o.meta.Store(m)
	}
}

// handler serves the document at path (and path/) to GET; any other
// method is the generic 405 Status, as kube-apiserver's routes answer.
func (o *openID) handler(path, contentType string, body func(*serviceaccount.OpenIDMetadata) []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.TrimSuffix(r.URL.Path, "/") != path {
			apiserver.WriteRouteNotFound(w, r) // path/<more>, which the prefix match of path/ routes here
			return
		}
		if r.Method != http.MethodGet {
			apiserver.WriteMethodNotAllowed(w, r)
			return
		}
		m := o.meta.Load()
		if m == nil {
			http.Error(w, "service account issuer discovery is not ready", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write(body(m))
	})
}
