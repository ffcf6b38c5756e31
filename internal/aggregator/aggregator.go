// Package aggregator is admitd's aggregation layer, as kube-aggregator is
// kube-apiserver's: a request for the group/version of an APIService that
// names a Service is proxied to that extension API server (proxy.go), as
// the authenticated user in the front proxy's X-Remote-* headers over a
// TLS connection that presents the proxy client certificate and verifies
// the APIService's caBundle; discovery lists the APIServices' groups in
// their priority order and merges the remote ones' resources
// (discovery.go); Check (available.go) is the remote availability
// controller's test of an APIService, which internal/controllers runs.
//
// The Service is resolved as upstream's resolvers do (resolve.go): to its
// cluster IP (or ExternalName), or with --enable-aggregator-routing to a
// ready endpoint of its EndpointSlices; default/kubernetes:443 is this
// server. It holds no state of its own but the transports and the remote
// discovery documents: APIServices, Services and EndpointSlices are read
// from the server's watch-fed caches.
//
// It is not an HTTP filter chain: internal/apiserver authenticates,
// authorizes and audits the request, then asks ServeProxy.
package aggregator

import (
	"context"
	"crypto/tls"
	"log/slog"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/admitd/admitd/internal/registry"
)

// APIServices reads the stored APIServices (a watch-fed cache).
type APIServices interface {
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
	List(ctx context.Context, namespace string, sel labels.Selector) ([]runtime.Object, error)
}

// Services reads Services and their EndpointSlices.
type Services interface {
	GetService(ctx context.Context, namespace, name string) (*corev1.Service, error)
	EndpointSlices(ctx context.Context, namespace, service string) ([]*discoveryv1.EndpointSlice, error)
}

// Options configure an Aggregator.
type Options struct {
	APIServices APIServices
	// Services are read by the proxy (a watch-fed cache).
	Services Services
	// CheckServices are read by Check, which runs on a change of a Service
	// or EndpointSlice and must see it (storage itself); nil: Services.
	CheckServices Services
	// Catalogue is what this server serves itself: its group/versions
	// count as Local APIServices in discovery until their APIServices
	// exist.
	Catalogue *registry.Catalogue
	// ProxyClientCert is presented to extension API servers
	// (--proxy-client-cert-file); nil presents none.
	ProxyClientCert *tls.Certificate
	// EndpointRouting dials a ready endpoint of the Service's
	// EndpointSlices instead of its cluster IP (--enable-aggregator-routing).
	EndpointRouting bool
	// MapService, when set, is asked first where "<name>.<namespace>.svc"
	// listens (admitd's --service-map).
	MapService func(host string) (hostPort string, ok bool)
	// Self is this server's own address (host:port), where
	// default/kubernetes:443 leads.
	Self func() string
	Log  *slog.Logger
}

// Aggregator proxies and merges the remote APIServices.
type Aggregator struct {
	o             Options
	transports    sync.Map // APIService name -> *transportEntry
	discovery     *remoteDiscovery
	openAPI       remoteOpenAPI
	openAPIV2Docs remoteOpenAPIV2
}

// New returns the aggregation layer of o.
func New(o Options) *Aggregator {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.CheckServices == nil {
		o.CheckServices = o.Services
	}
	a := &Aggregator{o: o}
	a.discovery = newRemoteDiscovery(a)
	return a
}

// apiService returns the stored APIService of group/version, nil when
// there is none.
func (a *Aggregator) apiService(ctx context.Context, group, version string) *apiregistrationv1.APIService {
	obj, err := a.o.APIServices.Get(ctx, "", version+"."+group)
	if err != nil {
		return nil
	}
	s, _ := obj.(*apiregistrationv1.APIService)
	return s
}

// apiServices returns every stored APIService.
func (a *Aggregator) apiServices(ctx context.Context) []*apiregistrationv1.APIService {
	objs, err := a.o.APIServices.List(ctx, "", labels.Everything())
	if err != nil {
		a.o.Log.Warn("listing APIServices", "err", err)
		return nil
	}
	out := make([]*apiregistrationv1.APIService, 0, len(objs))
	for _, obj := range objs {
		if s, ok := obj.(*apiregistrationv1.APIService); ok {
			out = append(out, s)
		}
	}
	return out
}

// isAvailable reports whether the APIService's Available condition is
// True.
func isAvailable(s *apiregistrationv1.APIService) bool {
	for _, c := range s.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status == apiregistrationv1.ConditionTrue
		}
	}
	return false
}
