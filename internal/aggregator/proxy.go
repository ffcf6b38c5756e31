package aggregator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/transport"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// discoveryTimeout bounds a proxied discovery request
// (/apis/<group>/<version>), as upstream's aggregated discovery timeout.
const discoveryTimeout = 5 * time.Second

// flushInterval is how often a proxied response is flushed while it
// streams (a watch flushes at once: its length is unknown).
const flushInterval = 200 * time.Millisecond

// ServeProxy serves a request under /apis/<group>/<version> when that
// group/version's APIService names a service, as kube-aggregator's proxy
// handler, and reports whether it did; a Local or missing APIService is
// left to this server. An APIService not Available is upstream's plain
// 503 "service unavailable", as is a service that does not resolve; refused
// is the code of such an answer the proxy gave itself (0 when it proxied),
// which upstream counts in apiserver_request_terminations_total. The
// request goes out without its credentials and impersonation headers, as
// user in the X-Remote-* headers, with the query re-encoded.
func (a *Aggregator) ServeProxy(w http.ResponseWriter, r *http.Request, user authenticationv1.UserInfo, group, version string) (served bool, refused int) {
	s := a.apiService(r.Context(), group, version)
	if s == nil || s.Spec.Service == nil {
		return false, 0
	}
	if !isAvailable(s) {
		return true, refuse(w, "service unavailable", http.StatusServiceUnavailable)
	}
	return true, a.proxyTo(w, r, s, user, group, version)
}

// refuse answers code with msg in place of the remote server and returns
// code.
func refuse(w http.ResponseWriter, msg string, code int) int {
	http.Error(w, msg, code)
	return code
}

// proxyTo sends r to s's server as user and copies the answer to w; it
// returns the code of an answer it gave itself when it could not send r
// (0 when it did).
func (a *Aggregator) proxyTo(w http.ResponseWriter, r *http.Request, s *apiregistrationv1.APIService, user authenticationv1.UserInfo, group, version string) (refused int) {
	rt, err := a.transport(s)
	if err != nil {
		return refuse(w, err.Error(), http.StatusInternalServerError)
	}
	host, err := a.resolve(r.Context(), s.Spec.Service)
	if err != nil {
		a.o.Log.Error("resolving the service of an APIService", "apiservice", s.Name, "err", err)
		return refuse(w, "service unavailable", http.StatusServiceUnavailable)
	}
	ctx, cancel := proxyContext(r, group, version)
	defer cancel()
	out := outgoingRequest(r.WithContext(ctx), host, w.Header().Get("Audit-Id"))
	transport.SetAuthProxyHeaders(out, user.Username, user.UID, user.Groups, extraOf(user))
	proxy := &httputil.ReverseProxy{
		Director:       func(*http.Request) {}, // out is already addressed; X-Forwarded-For is added
		Transport:      rt,
		FlushInterval:  flushInterval,
		ModifyResponse: rejectRedirects,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		},
	}
	proxy.ServeHTTP(w, out)
	return 0
}

// proxyContext bounds a discovery request of the group/version.
func proxyContext(r *http.Request, group, version string) (context.Context, context.CancelFunc) {
	if strings.Trim(r.URL.Path, "/") == "apis/"+group+"/"+version {
		return context.WithTimeout(r.Context(), discoveryTimeout)
	}
	return r.Context(), func() {}
}

// outgoingRequest is r for host: same method, path and body, the query
// re-encoded, without the credentials the server has read (Authorization,
// Impersonate-*), with the request's audit ID.
func outgoingRequest(r *http.Request, host, auditID string) *http.Request {
	out := r.Clone(r.Context())
	out.URL.Scheme, out.URL.Host = "https", host
	out.URL.RawQuery = r.URL.Query().Encode()
	out.RequestURI = ""
	out.Header.Del("Authorization")
	for key := range out.Header {
		if strings.HasPrefix(key, "Impersonate-") {
			delete(out.Header, key)
		}
	}
	if auditID != "" {
		out.Header.Set("Audit-Id", auditID)
	}
	return out
}

func extraOf(user authenticationv1.UserInfo) map[string][]string {
	if len(user.Extra) == 0 {
		return nil
	}
	out := make(map[string][]string, len(user.Extra))
	for k, v := range user.Extra {
		out[k] = v
	}
	return out
}

// redirectRefused is upstream's answer (--aggregator-reject-forwarding-redirect,
// default true) to a backend that redirects.
const redirectRefused = "the backend attempted to redirect this request, which is not permitted"

// rejectRedirects replaces a redirect of the backend by a 502.
func rejectRedirects(resp *http.Response) error {
	if resp.StatusCode < 300 || resp.StatusCode > 399 || resp.Header.Get("Location") == "" {
		return nil
	}
	resp.Body.Close()
	*resp = http.Response{StatusCode: http.StatusBadGateway, Status: fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode)),
		Header: http.Header{}, Body: io.NopCloser(strings.NewReader(redirectRefused)), ContentLength: int64(len(redirectRefused)),
		Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor, Request: resp.Request}
	return nil
}
