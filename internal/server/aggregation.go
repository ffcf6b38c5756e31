package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/aggregator"
	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/pki"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// AggregationOptions are kube-apiserver's flags of the aggregation layer
// and of front-proxy authentication. With none of the files given, admitd
// makes a front-proxy CA and client certificate in <data-dir>/pki (as
// kubeadm does) and trusts them with kubeadm's header settings; the
// header flags given replace those defaults.
type AggregationOptions struct {
	// RequestHeaderClientCAFile is --requestheader-client-ca-file: the CA
	// of front proxies allowed to assert users in headers.
	RequestHeaderClientCAFile string
	// RequestHeaderAllowedNames is --requestheader-allowed-names: the
	// common names a front proxy's certificate may have (empty: any).
	RequestHeaderAllowedNames []string
	// RequestHeaderUsernameHeaders, RequestHeaderUIDHeaders,
	// RequestHeaderGroupHeaders and RequestHeaderExtraHeadersPrefix are
	// the --requestheader-*-headers flags.
	RequestHeaderUsernameHeaders    []string
	RequestHeaderUIDHeaders         []string
	RequestHeaderGroupHeaders       []string
	RequestHeaderExtraHeadersPrefix []string
	// ProxyClientCertFile and ProxyClientKeyFile are the certificate the
	// aggregation layer presents to extension API servers.
	ProxyClientCertFile string
	ProxyClientKeyFile  string
	// EnableAggregatorRouting dials an endpoint of an APIService's Service
	// instead of its cluster IP.
	EnableAggregatorRouting bool
}

// generated reports whether admitd makes the front-proxy PKI itself.
func (a AggregationOptions) generated() bool {
	return a.RequestHeaderClientCAFile == "" && a.ProxyClientCertFile == "" && a.ProxyClientKeyFile == ""
}

// frontProxy is what the aggregation options resolve to.
type frontProxy struct {
	// requestHeader authenticates front proxies; nil when there is no
	// front-proxy CA.
	requestHeader *auth.RequestHeaderOptions
	caPEM         []byte
	// clientCert is presented to extension servers; nil presents none.
	clientCert *tls.Certificate
}

// newFrontProxy reads or makes the front-proxy CA and client certificate.
func newFrontProxy(o Options) (*frontProxy, error) {
	a := o.Aggregation
	if a.generated() {
		fp, err := pki.EnsureFrontProxy(filepath.Join(o.DataDir, "pki"))
		if err != nil {
			return nil, fmt.Errorf("preparing the front-proxy certificates: %w", err)
		}
		cert, err := fp.ClientCertificate()
		if err != nil {
			return nil, err
		}
		or := func(given []string, def string) []string {
			if len(given) > 0 {
				return given
			}
			return []string{def}
		}
		a.RequestHeaderAllowedNames = or(a.RequestHeaderAllowedNames, pki.FrontProxyClientName)
		a.RequestHeaderUsernameHeaders = or(a.RequestHeaderUsernameHeaders, "X-Remote-User")
		a.RequestHeaderGroupHeaders = or(a.RequestHeaderGroupHeaders, "X-Remote-Group")
		a.RequestHeaderExtraHeadersPrefix = or(a.RequestHeaderExtraHeadersPrefix, "X-Remote-Extra-")
		return &frontProxy{requestHeader: requestHeaderOptions(a, fp.CA.Pool()), caPEM: fp.CA.CertPEM, clientCert: &cert}, nil
	}
	out := &frontProxy{}
	if (a.ProxyClientCertFile == "") != (a.ProxyClientKeyFile == "") {
		return nil, errors.New("--proxy-client-cert-file and --proxy-client-key-file must be given together")
	}
	if a.ProxyClientCertFile != "" {
		cert, err := tls.LoadX509KeyPair(a.ProxyClientCertFile, a.ProxyClientKeyFile)
		if err != nil {
			return nil, fmt.Errorf("loading --proxy-client-cert-file: %w", err)
		}
		out.clientCert = &cert
	}
	if a.RequestHeaderClientCAFile != "" {
		data, err := os.ReadFile(a.RequestHeaderClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("reading --requestheader-client-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("--requestheader-client-ca-file %s holds no PEM certificates", a.RequestHeaderClientCAFile)
		}
		out.requestHeader, out.caPEM = requestHeaderOptions(a, pool), data
	}
	return out, nil
}

func requestHeaderOptions(a AggregationOptions, pool *x509.CertPool) *auth.RequestHeaderOptions {
	return &auth.RequestHeaderOptions{ClientCA: pool, AllowedNames: a.RequestHeaderAllowedNames, UsernameHeaders: a.RequestHeaderUsernameHeaders,
		UIDHeaders: a.RequestHeaderUIDHeaders, GroupHeaders: a.RequestHeaderGroupHeaders, ExtraHeaderPrefixes: a.RequestHeaderExtraHeadersPrefix}
}

// authenticationInfo is what this server publishes in
// kube-system/extension-apiserver-authentication.
func (fp *frontProxy) authenticationInfo(clientCA []byte) controllers.AuthenticationInfo {
	info := controllers.AuthenticationInfo{ClientCA: clientCA}
	if rh := fp.requestHeader; rh != nil {
		info.RequestHeaderCA, info.AllowedNames, info.UsernameHeaders = fp.caPEM, rh.AllowedNames, rh.UsernameHeaders
		info.UIDHeaders, info.GroupHeaders, info.ExtraHeaderPrefixes = rh.UIDHeaders, rh.GroupHeaders, rh.ExtraHeaderPrefixes
	}
	return info
}

var apiServicesGVR = apiregistrationv1.SchemeGroupVersion.WithResource("apiservices")

// newAggregator is the aggregation layer over the server's caches; self
// is the server's address once it listens.
func newAggregator(o Options, store storage.Store, adm *admissionParts, cat *registry.Catalogue, fp *frontProxy, self *atomic.Pointer[string]) *aggregator.Aggregator {
	services := adm.sources.Services()
	mapped := newServiceResolver(o.ServiceMap, nil)
	return aggregator.New(aggregator.Options{
		APIServices: adm.sources.For(apiServicesGVR), Services: services, CheckServices: admissionsource.NewServiceLookup(store, cat), Catalogue: cat,
		ProxyClientCert: fp.clientCert, EndpointRouting: o.Aggregation.EnableAggregatorRouting,
		MapService: mapped.lookupMap,
		Self: func() string {
			if p := self.Load(); p != nil {
				return *p
			}
			return ""
		},
		Log: o.Logger.With("component", "aggregator"),
	})
}

// startAPIServiceAvailability runs the remote availability controller
// until ctx ends, writing status as the API server itself.
func startAPIServiceAvailability(ctx context.Context, p *apiParts, log *slog.Logger) error {
	c, err := controllers.NewAPIServiceAvailability(p.store, p.cat, p.api.Loopback(apiserverUser), p.aggregator.Check, log.With("controller", "apiservice-availability"))
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}

// startAuthenticationTrust publishes this server's client and front-proxy
// CAs in kube-system/extension-apiserver-authentication until ctx ends.
func startAuthenticationTrust(ctx context.Context, p *apiParts, log *slog.Logger) error {
	c, err := controllers.NewClusterAuthenticationTrust(p.api.Loopback(apiserverUser), p.frontProxy.authenticationInfo(p.clientCA),
		log.With("controller", "cluster-authentication-trust"))
	if err != nil {
		return err
	}
	if err := c.Sync(ctx); err != nil {
		log.Warn("publishing the authentication trust", "err", err)
	}
	go c.Run(ctx)
	return nil
}
