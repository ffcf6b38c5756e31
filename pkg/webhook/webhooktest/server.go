package webhooktest

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// Server is an HTTPS webhook server on 127.0.0.1.
type Server struct {
	// Server is the running server; its URL is https://127.0.0.1:<port>.
	*httptest.Server
	// CA issued the server's certificate, valid for 127.0.0.1, localhost
	// and the hosts NewUnstartedServer was given.
	CA *CA
}

// NewUnstartedServer returns a server for h with a certificate from ca (a
// new CA when nil). The caller may change it (EnableHTTP2, Config) before
// calling StartTLS, and closes it.
func NewUnstartedServer(ca *CA, h http.Handler, hosts ...string) (*Server, error) {
	if ca == nil {
		var err error
		if ca, err = NewCA("webhooktest CA"); err != nil {
			return nil, err
		}
	}
	cert, err := ca.Issue(append([]string{"127.0.0.1", "localhost"}, hosts...)...)
	if err != nil {
		return nil, err
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	return &Server{Server: srv, CA: ca}, nil
}

// Start serves h over HTTPS, with a new CA, until the test ends.
func Start(t testing.TB, h http.Handler) *Server {
	t.Helper()
	s, err := NewUnstartedServer(nil, h)
	if err != nil {
		t.Fatalf("starting a webhook server: %v", err)
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// CABundle is the PEM certificate that trusts the server.
func (s *Server) CABundle() []byte { return s.CA.CertPEM }

// ClientConfig is the webhook clientConfig that calls path on the server.
func (s *Server) ClientConfig(path string) admissionregistrationv1.WebhookClientConfig {
	url := s.URL + path
	return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: s.CABundle()}
}
