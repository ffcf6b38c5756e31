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
)

// ServiceResolver finds the address (host:port) to dial for a webhook
// behind a Service reference.
type ServiceResolver interface {
	ResolveService(namespace, name string, port int32) (string, error)
}

// endpoint is a webhook's resolved client configuration.
type endpoint struct {
	url        *url.URL // what is requested (service form: https://<svc>.<ns>.svc:<port><path>)
	serverName string   // TLS name for service webhooks
	service    *admissionregistrationv1.ServiceReference
	http2      bool
}

// client is the HTTP client of one distinct client configuration.
type client struct {
	ep   endpoint
	http *http.Client
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
func (c *clientCache) get(cc admissionregistrationv1.WebhookClientConfig) (*client, error) {
	key := cacheKey(cc)
	c.mu.Lock()
	cl, ok := c.clients[key]
	c.mu.Unlock()
	if ok {
		return cl, nil
	}
	cl, err := c.build(cc)
	if err != nil {
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
	if ep.service != nil {
		svc := *ep.service
		tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			if c.resolver == nil {
				return nil, fmt.Errorf("no service resolver for service %s/%s", svc.Namespace, svc.Name)
			}
			addr, err := c.resolver.ResolveService(svc.Namespace, svc.Name, servicePort(svc))
			if err != nil {
				return nil, err
			}
			return dialer.DialContext(ctx, network, addr)
		}
	} else {
		tr.DialContext = dialer.DialContext
	}
	rt, err := applyUser(c.creds.userFor(ep.credentialKey()), tr)
	if err != nil {
		return nil, err
	}
	return &client{ep: ep, http: &http.Client{Transport: rt, Timeout: 30 * time.Second}}, nil
}

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
			return endpoint{}, fmt.Errorf("Unparsable URL: %v", err)
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
	return endpoint{}, errors.New("webhook configuration must have either service or URL")
}

// post sends a review and returns the response body, or a call failure
// with the status code it counts as.
func (cl *client) post(ctx context.Context, body []byte) ([]byte, int32, error) {
	u := *cl.ep.url
	if deadline, ok := ctx.Deadline(); ok {
		secs := int64(math.Ceil(time.Until(deadline).Seconds()))
		if secs < 1 {
			secs = 1
		}
		q := u.Query()
		q.Set("timeout", (time.Duration(secs) * time.Second).String())
		u.RawQuery = q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, http.StatusServiceUnavailable, fmt.Errorf("failed to call webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	req.Header.Set("User-Agent", "kube-apiserver-admission")
	resp, err := cl.http.Do(req)
	if err != nil {
		return nil, http.StatusServiceUnavailable, fmt.Errorf("failed to call webhook: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, http.StatusServiceUnavailable, fmt.Errorf("failed to call webhook: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 206 {
		if resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, int32(resp.StatusCode), fmt.Errorf("failed to call webhook: %w", httpError(resp, data))
		}
	}
	if len(data) == 0 {
		return nil, http.StatusServiceUnavailable, fmt.Errorf("failed to call webhook: 0-length response with status code: %d and content type: %s",
			resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return data, int32(resp.StatusCode), nil
}

// httpError is the error of a non-2xx answer, as the Kubernetes REST client
// reports it: the Status the body holds, or a generic server response.
func httpError(resp *http.Response, body []byte) error {
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Status == metav1.StatusFailure {
		if st.Code == 0 {
			st.Code = int32(resp.StatusCode)
		}
		return &apierrors.StatusError{ErrStatus: st}
	}
	msg := "unknown"
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/") {
		if len(body) > 2048 {
			body = body[:2048]
		}
		msg = strings.TrimSpace(string(body))
	}
	return apierrors.NewGenericServerResponse(resp.StatusCode, http.MethodPost, schema.GroupResource{}, "", msg, 0, true)
}
