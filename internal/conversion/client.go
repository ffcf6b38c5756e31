package conversion

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// webhookTimeout is upstream's timeout of every webhook request (sent to
// the webhook as ?timeout=30s).
const webhookTimeout = 30 * time.Second

// maxClients bounds the client cache, as upstream's client manager does.
const maxClients = 200

// reviewSerializer reads and writes ConversionReview v1 and v1beta1, each
// in its own version; built on first use.
var reviewSerializer = sync.OnceValue(func() runtime.NegotiatedSerializer {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := apiextensionsv1beta1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	codec := serializer.NewCodecFactory(scheme).LegacyCodec(apiextensionsv1.SchemeGroupVersion, apiextensionsv1beta1.SchemeGroupVersion)
	return serializer.NegotiatedSerializerWrapper(runtime.SerializerInfo{Serializer: codec})
})

// clientCache holds one REST client per distinct client configuration.
type clientCache struct {
	resolver ServiceResolver
	mu       sync.Mutex
	clients  map[string]*rest.RESTClient
}

func newClientCache(resolver ServiceResolver) *clientCache {
	return &clientCache{resolver: resolver, clients: map[string]*rest.RESTClient{}}
}

// get returns the client of cc, building it on first use.
func (c *clientCache) get(crdName string, cc apiextensionsv1.WebhookClientConfig) (*rest.RESTClient, error) {
	if len(cc.CABundle) > 0 && len(bytes.TrimSpace(cc.CABundle)) == 0 {
		cc.CABundle = nil // whitespace only counts as none
	}
	keyBytes, err := json.Marshal(cc)
	if err != nil {
		return nil, err
	}
	key := string(keyBytes)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.clients[key]; ok {
		return cl, nil
	}
	cfg, err := c.restConfig(crdName, cc)
	if err != nil {
		return nil, err
	}
	cl, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	if len(c.clients) >= maxClients {
		c.clients = map[string]*rest.RESTClient{}
	}
	c.clients[key] = cl
	return cl, nil
}

// restConfig is upstream's client configuration of a conversion webhook:
// no credentials, the caBundle as the only roots, HTTP/1.1 except to a
// loopback URL, and a service dialled at the address the resolver gives.
func (c *clientCache) restConfig(crdName string, cc apiextensionsv1.WebhookClientConfig) (*rest.Config, error) {
	cfg := &rest.Config{UserAgent: "kube-apiserver-admission", Timeout: webhookTimeout, QPS: -1}
	cfg.TLSClientConfig.CAData = cc.CABundle
	cfg.ContentConfig.NegotiatedSerializer = reviewSerializer()
	cfg.ContentConfig.ContentType = runtime.ContentTypeJSON
	switch {
	case cc.Service != nil:
		c.serviceConfig(cfg, *cc.Service)
	case cc.URL != nil:
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return nil, fmt.Errorf("failed calling webhook %q: Unparsable URL: %v", "conversion_webhook_for_"+crdName, err)
		}
		cfg.Host = u.Scheme + "://" + u.Host
		cfg.APIPath = u.Path
		if !isLoopback(u) {
			cfg.NextProtos = []string{"http/1.1"}
		}
	default:
		return nil, fmt.Errorf("failed calling webhook %q: webhook configuration must have either service or URL", "conversion_webhook_for_"+crdName)
	}
	return cfg, nil
}

func (c *clientCache) serviceConfig(cfg *rest.Config, svc apiextensionsv1.ServiceReference) {
	port := int32(443)
	if svc.Port != nil && *svc.Port != 0 {
		port = *svc.Port
	}
	serverName := svc.Name + "." + svc.Namespace + ".svc"
	host := net.JoinHostPort(serverName, strconv.Itoa(int(port)))
	cfg.Host = "https://" + host
	if svc.Path != nil {
		cfg.APIPath = *svc.Path
	}
	cfg.NextProtos = []string{"http/1.1"}
	cfg.TLSClientConfig.ServerName = serverName
	var d net.Dialer
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == host {
			if c.resolver == nil {
				return nil, fmt.Errorf("service %q not found", svc.Name)
			}
			resolved, err := c.resolver.ResolveService(svc.Namespace, svc.Name, port)
			if err != nil {
				return nil, err
			}
			addr = resolved
		}
		return d.DialContext(ctx, network, addr)
	}
}

func isLoopback(u *url.URL) bool {
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
