package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/pkg/apis/clientauthentication"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/pkg/yamlbound"
)

// ServiceResolver finds the address (host:port) to dial for a webhook
// behind a Service reference.
type ServiceResolver interface {
	ResolveService(namespace, name string, port int32) (string, error)
}

// endpoint is a webhook's resolved client configuration.
type endpoint struct {
	url        *url.URL // what is requested (service form: https://<svc>.<ns>.svc:<port><path>)
	plainURL   string   // url as a string if it has no query or fragment, else ""
	serverName string   // TLS name for service webhooks
	service    *admissionregistrationv1.ServiceReference
	http2      bool
}

// client is the HTTP client of one distinct client configuration.
type client struct {
	ep      endpoint
	resolve func() (string, error) // service webhooks only
	http    *http.Client
}

// clientCache shares clients between webhooks with the same client
// configuration (url, caBundle, service), as upstream's client manager.
type clientCache struct {
	resolver ServiceResolver
	creds    *credentials
	mu       sync.Mutex
	clients  map[string]*client
}

func newClientCache(resolver ServiceResolver, creds *credentials) *clientCache {
	if creds == nil {
		creds = &credentials{}
	}
	return &clientCache{resolver: resolver, creds: creds, clients: map[string]*client{}}
}

func cacheKey(cc admissionregistrationv1.WebhookClientConfig) string {
	b, _ := json.Marshal(struct {
		URL      *string                                   `json:"url,omitempty"`
		CABundle []byte                                    `json:"caBundle,omitempty"`
		Service  *admissionregistrationv1.ServiceReference `json:"service,omitempty"`
	}{cc.URL, cc.CABundle, cc.Service})
	return string(b)
}

// get returns the client for a configuration, building it on first use.
// Build errors are not cached.
func (c *clientCache) get(h *hook) (*client, error) {
	webhook, cc, key := h.Name, h.ClientConfig, h.clientCacheKey()
	c.mu.Lock()
	cl, ok := c.clients[key]
	c.mu.Unlock()
	if ok {
		return cl, nil
	}
	cl, err := c.build(cc)
	if err != nil {
		var ee endpointError
		if errors.As(err, &ee) {
			// upstream's client manager reports these as a failure of its own
			err = &callError{Webhook: webhook, Reason: ee.error}
		}
		return nil, fmt.Errorf("could not get REST client: %w", err)
	}
	c.mu.Lock()
	if len(c.clients) >= 200 {
		c.clients = map[string]*client{}
	}
	c.clients[key] = cl
	c.mu.Unlock()
	return cl, nil
}

func (c *clientCache) build(cc admissionregistrationv1.WebhookClientConfig) (*client, error) {
	ep, err := resolveEndpoint(cc)
	if err != nil {
		return nil, err
	}
	ep.plainURL = plainURLString(ep.url)
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: ep.serverName}
	if len(cc.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cc.CABundle) {
			return nil, errors.New("unable to load root certificates: unable to parse bytes as PEM block")
		}
		tlsCfg.RootCAs = pool
	}
	tr := &http.Transport{
		TLSClientConfig:     tlsCfg,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   ep.http2,
	}
	if !ep.http2 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	var resolve func() (string, error)
	if ep.service != nil {
		svc := *ep.service
		resolve = func() (string, error) {
			if c.resolver == nil {
				return "", fmt.Errorf("no service resolver for service %s/%s", svc.Namespace, svc.Name)
			}
			return c.resolver.ResolveService(svc.Namespace, svc.Name, servicePort(svc))
		}
		tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			addr, ok := ctx.Value(dialAddressKey{}).(string)
			if !ok {
				return nil, fmt.Errorf("service %s/%s was not resolved", svc.Namespace, svc.Name)
			}
			return dialer.DialContext(ctx, network, addr)
		}
	} else {
		tr.DialContext = dialer.DialContext
	}
	cluster := &clientauthentication.Cluster{Server: ep.url.String(), TLSServerName: ep.serverName, CertificateAuthorityData: cc.CABundle}
	rt, err := applyUser(c.creds.userFor(ep.credentialKey()), tr, cluster)
	if err != nil {
		return nil, err
	}
	return &client{ep: ep, resolve: resolve, http: &http.Client{Transport: rt, Timeout: 30 * time.Second}}, nil
}

// dialAddressKey carries, in a request's context, the address a service
// webhook resolved to: resolution happens in the caller's goroutine (where
// a panicking resolver is recovered like any other webhook failure), the
// dial in the transport's.
type dialAddressKey struct{}

// credentialKey is the host:port under which the webhook's credentials are
// looked up (port 443 when the URL has none).
func (ep endpoint) credentialKey() string {
	if ep.url.Port() != "" {
		return ep.url.Host
	}
	return net.JoinHostPort(ep.url.Hostname(), "443")
}

func servicePort(s admissionregistrationv1.ServiceReference) int32 {
	if s.Port != nil {
		return *s.Port
	}
	return 443
}

func resolveEndpoint(cc admissionregistrationv1.WebhookClientConfig) (endpoint, error) {
	switch {
	case cc.URL != nil && cc.Service == nil:
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return endpoint{}, endpointError{fmt.Errorf("Unparsable URL: %v", err)}
		}
		u.Path = path.Clean("/" + u.Path)
		host := u.Hostname()
		ip := net.ParseIP(host)
		return endpoint{url: u, http2: strings.EqualFold(host, "localhost") || (ip != nil && ip.IsLoopback())}, nil
	case cc.Service != nil && cc.URL == nil:
		s := cc.Service
		if s.Name == "" || s.Namespace == "" {
			return endpoint{}, errors.New("cannot resolve an empty service name or namespace or port")
		}
		host := s.Name + "." + s.Namespace + ".svc"
		p := ""
		if s.Path != nil {
			p = *s.Path
		}
		u := &url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(int(servicePort(*s)))), Path: path.Clean("/" + p)}
		return endpoint{url: u, serverName: host, service: s}, nil
	}
	return endpoint{}, endpointError{errors.New("webhook configuration must have either service or URL")}
}

// endpointError is a client configuration without a usable service or URL.
type endpointError struct{ error }

// maxRetries bounds the retries of an answer that asks for one
// (429 or 5xx with Retry-After), as the Kubernetes REST client does.
const maxRetries = 10

// post sends a review and returns the response body, or a call failure
// with the status code it counts as.
func (cl *client) post(ctx context.Context, body []byte) ([]byte, int32, error) {
	u := cl.requestURL(ctx)
	if cl.resolve != nil {
		addr, err := cl.resolve()
		if err != nil {
			// worded as the HTTP client words a failure of its transport
			return nil, http.StatusServiceUnavailable, fmt.Errorf("failed to call webhook: %w", &url.Error{Op: "Post", URL: u, Err: err})
		}
		ctx = context.WithValue(ctx, dialAddressKey{}, addr)
	}
	for attempt := 0; ; attempt++ {
		resp, data, err := cl.send(ctx, u, body)
		if err != nil {
			return nil, http.StatusServiceUnavailable, err
		}
		if wait, ok := retryAfter(resp); ok && attempt < maxRetries {
			select {
			case <-time.After(wait):
				continue
			case <-ctx.Done():
			}
		}
		return checkResponse(resp, data)
	}
}

// requestURL adds the ?timeout= the remaining time allows, rounded up to
// whole seconds.
func (cl *client) requestURL(ctx context.Context) string {
	deadline, ok := ctx.Deadline()
	if !ok {
		return cl.ep.url.String()
	}
	secs := int64(math.Ceil(time.Until(deadline).Seconds()))
	if secs < 1 {
		secs = 1
	}
	timeout := (time.Duration(secs) * time.Second).String()
	if cl.ep.plainURL != "" {
		// the query would hold timeout alone: no need to build and sort it
		return cl.ep.plainURL + "?timeout=" + url.QueryEscape(timeout)
	}
	u := *cl.ep.url
	q := u.Query()
	q.Set("timeout", timeout)
	u.RawQuery = q.Encode()
	return u.String()
}

// plainURLString is the URL as a string when it has neither query nor
// fragment (a query parameter can then be appended to it), else "".
func plainURLString(u *url.URL) string {
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.RawFragment != "" {
		return ""
	}
	return u.String()
}

func (cl *client) send(ctx context.Context, u string, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("failed to call webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	req.Header.Set("User-Agent", "kube-apiserver-admission")
	resp, err := cl.http.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to call webhook: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		// as client-go's transformResponse words a failed body read
		return nil, nil, fmt.Errorf("failed to call webhook: unexpected error when reading response body. Please retry. Original error: %w", err)
	}
	return resp, data, nil
}

// retryAfter reports whether an answer asks to be retried, and when.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
		return 0, false
	}
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	secs, err := strconv.Atoi(v)
	if err != nil || secs < 0 {
		return 0, false
	}
	return time.Duration(secs) * time.Second, true
}

// statusJSON returns body as JSON if client-go's decoder reads it as a
// Status: JSON or YAML whose kind, found regardless of case (the last
// wins), is Status, with any well-formed apiVersion (Status is registered
// unversioned).
func statusJSON(body []byte) ([]byte, bool) {
	j := body
	if !json.Valid(body) {
		if yamlbound.Check(body) != nil {
			return nil, false
		}
		y, err := yaml.YAMLToJSON(body)
		if err != nil {
			return nil, false
		}
		j = y
	}
	gvk, err := serializerjson.DefaultMetaFactory.Interpret(j)
	return j, err == nil && gvk.Kind == "Status"
}

// isTextResponse is client-go's: no Content-Type, or a text/ one.
func isTextResponse(resp *http.Response) bool {
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		return true
	}
	media, _, err := mime.ParseMediaType(ct)
	return err == nil && strings.HasPrefix(media, "text/")
}

// checkResponse turns a non-2xx or empty answer into a call failure.
func checkResponse(resp *http.Response, data []byte) ([]byte, int32, error) {
	if (resp.StatusCode < 200 || resp.StatusCode > 206) && resp.StatusCode != http.StatusSwitchingProtocols {
		se := httpError(resp, data)
		return nil, se.ErrStatus.Code, fmt.Errorf("failed to call webhook: %w", se)
	}
	if len(data) == 0 {
		return nil, http.StatusServiceUnavailable, fmt.Errorf("failed to call webhook: 0-length response with status code: %d and content type: %s",
			resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return data, int32(resp.StatusCode), nil
}

// httpError is the error of a non-2xx answer, as the Kubernetes REST client
// reports it: the Status the body holds (decoded case-sensitively, its code
// as it says, even 0), or a generic server response with the HTTP code.
func httpError(resp *http.Response, body []byte) *apierrors.StatusError {
	var st metav1.Status
	if j, ok := statusJSON(body); ok && sigsjson.UnmarshalCaseSensitivePreserveInts(j, &st) == nil && st.Status == metav1.StatusFailure {
		st.Kind, st.APIVersion = "Status", "v1"
		return &apierrors.StatusError{ErrStatus: st}
	}
	msg := "unknown"
	if isTextResponse(resp) {
		if len(body) > 2048 {
			body = body[:2048]
		}
		msg = strings.TrimSpace(string(body))
	}
	return apierrors.NewGenericServerResponse(resp.StatusCode, http.MethodPost, schema.GroupResource{}, "", msg, 0, true)
}
