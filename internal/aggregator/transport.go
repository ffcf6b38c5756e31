package aggregator

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"time"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// transportEntry is the transport of one APIService, kept while the
// settings it was built from stay the same.
type transportEntry struct {
	key transportKey
	rt  *http.Transport
	err error
}

// transportKey is what a transport depends on.
type transportKey struct {
	serverName string
	caBundle   string
	insecure   bool
}

func keyOf(s *apiregistrationv1.APIService) transportKey {
	ref := s.Spec.Service
	return transportKey{serverName: ref.Name + "." + ref.Namespace + ".svc", caBundle: string(s.Spec.CABundle), insecure: s.Spec.InsecureSkipTLSVerify}
}

// transport returns the transport to s's service, as upstream's
// BuildTransportConfig: TLS verifying the server name
// "<service>.<namespace>.svc" with the caBundle (the system roots
// without one) unless insecureSkipTLSVerify, presenting the proxy client
// certificate; HTTP/2 when the server offers it. An unusable caBundle is
// the error every request of the APIService gets.
func (a *Aggregator) transport(s *apiregistrationv1.APIService) (*http.Transport, error) {
	key := keyOf(s)
	if e, ok := a.transports.Load(s.Name); ok && e.(*transportEntry).key == key {
		return e.(*transportEntry).rt, e.(*transportEntry).err
	}
	e := &transportEntry{key: key}
	e.rt, e.err = a.newTransport(key)
	if old, loaded := a.transports.Swap(s.Name, e); loaded && old.(*transportEntry).rt != nil {
		old.(*transportEntry).rt.CloseIdleConnections()
	}
	return e.rt, e.err
}

func (a *Aggregator) newTransport(key transportKey) (*http.Transport, error) {
	cfg := &tls.Config{ServerName: key.serverName, InsecureSkipVerify: key.insecure, MinVersion: tls.VersionTLS12}
	if key.caBundle != "" && !key.insecure {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(key.caBundle)) {
			return nil, errors.New("unable to load root certificates: unable to parse bytes as PEM block")
		}
		cfg.RootCAs = pool
	}
	if cert := a.o.ProxyClientCert; cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:               nil,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     cfg,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 25,
		ForceAttemptHTTP2:   true,
	}, nil
}
