package auth

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// RequestHeaderOptions are kube-apiserver's --requestheader-* flags: a
// front proxy (the aggregation layer of another API server) whose client
// certificate chains to ClientCA and, when AllowedNames is not empty,
// carries one of those common names, asserts the user in headers.
type RequestHeaderOptions struct {
	ClientCA            *x509.CertPool
	AllowedNames        []string
	UsernameHeaders     []string
	UIDHeaders          []string
	GroupHeaders        []string
	ExtraHeaderPrefixes []string
}

// RequestHeaderAuthenticator is upstream's request-header authenticator
// behind its certificate verifier (k8s.io/apiserver's headerrequest and
// x509request): the user is the first non-empty username header, the UID
// the first non-empty UID header, the groups every non-empty value of
// the group headers, and each header under an extra prefix an extra
// (key lower-cased, then %-decoded). The headers it reads are removed
// from the request once it has found a user, so that nothing downstream
// (the aggregation layer's proxy) forwards them.
type RequestHeaderAuthenticator struct {
	o    RequestHeaderOptions
	opts x509.VerifyOptions
}

// NewRequestHeader returns the authenticator of o.
func NewRequestHeader(o RequestHeaderOptions) *RequestHeaderAuthenticator {
	return &RequestHeaderAuthenticator{o: o, opts: x509.VerifyOptions{Roots: o.ClientCA, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}}
}

// Authenticate implements Authenticator. A request without a client
// certificate, or without a username header, has no credential of this
// kind; a certificate that does not verify, or whose name is not allowed,
// is an error (the x509 authenticator is asked next).
func (a *RequestHeaderAuthenticator) Authenticate(r *http.Request) (authenticationv1.UserInfo, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return authenticationv1.UserInfo{}, false, nil
	}
	name := firstHeader(r.Header, a.o.UsernameHeaders)
	if name == "" {
		// no user to take from the headers, whatever the certificate: the
		// x509 authenticator is next either way (its chain is not
		// verified twice on every client-certificate request)
		return authenticationv1.UserInfo{}, false, nil
	}
	opts := a.opts
	certs := r.TLS.PeerCertificates
	if len(certs) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range certs[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	if _, err := certs[0].Verify(opts); err != nil {
		return authenticationv1.UserInfo{}, false, fmt.Errorf("verifying front-proxy certificate %s failed: %w", certificateID(certs[0]), err)
	}
	if cn := certs[0].Subject.CommonName; len(a.o.AllowedNames) > 0 && !slices.Contains(a.o.AllowedNames, cn) {
		return authenticationv1.UserInfo{}, false, fmt.Errorf("x509: subject with cn=%s is not in the allowed list", cn)
	}
	user := authenticationv1.UserInfo{Username: name, UID: firstHeader(r.Header, a.o.UIDHeaders),
		Groups: allHeaderValues(r.Header, a.o.GroupHeaders), Extra: extraHeaders(r.Header, a.o.ExtraHeaderPrefixes)}
	a.clear(r.Header)
	return user, true, nil
}

func (a *RequestHeaderAuthenticator) clear(h http.Header) {
	for _, names := range [][]string{a.o.UsernameHeaders, a.o.UIDHeaders, a.o.GroupHeaders} {
		for _, n := range names {
			h.Del(n)
		}
	}
	for key := range h {
		for _, prefix := range a.o.ExtraHeaderPrefixes {
			if strings.HasPrefix(strings.ToLower(key), strings.ToLower(prefix)) {
				delete(h, key)
			}
		}
	}
}

func firstHeader(h http.Header, names []string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

func allHeaderValues(h http.Header, names []string) []string {
	out := []string{}
	for _, n := range names {
		for _, v := range h[http.CanonicalHeaderKey(n)] {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// extraHeaders reads the extras, prefix by prefix so that each key's
// values keep their order.
func extraHeaders(h http.Header, prefixes []string) map[string]authenticationv1.ExtraValue {
	out := map[string]authenticationv1.ExtraValue{}
	for _, prefix := range prefixes {
		for name, values := range h {
			if !strings.HasPrefix(strings.ToLower(name), strings.ToLower(prefix)) {
				continue
			}
			key := strings.ToLower(name[len(prefix):])
			if unescaped, err := url.PathUnescape(key); err == nil {
				key = unescaped
			}
			out[key] = append(out[key], values...)
		}
	}
	return out
}
