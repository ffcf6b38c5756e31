package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Server is an HTTPS server for webhooks. It serves /readyz itself (200
// `ok` while serving, 503 once shutting down) and every other path with
// Handler, over HTTP/1.1 and HTTP/2.
type Server struct {
	// Addr is the TCP address ListenAndServe listens on. Default:
	// DefaultAddr, the loopback interface only; ":8443" listens on every
	// interface, as a webhook in a Pod behind a Service must.
	Addr string
	// CertFile and KeyFile are the serving certificate chain (PEM, leaf
	// first) and its key. They are loaded before the server listens and
	// reloaded on the first handshake after either file changes.
	CertFile, KeyFile string
	// TLSConfig is the base TLS configuration; it is cloned. With CertFile
	// set, its GetCertificate is replaced; otherwise it must provide the
	// certificate. Default: Go's defaults (TLS 1.2 and 1.3).
	TLSConfig *tls.Config
	// Handler serves every path but /readyz, typically an http.ServeMux of
	// NewHTTPHandler handlers. Default: 404 for every path.
	Handler http.Handler
	// ShutdownTimeout bounds how long reviews in flight may finish once the
	// context is done; after it their contexts are cancelled and the
	// connections closed. Default: 30s.
	ShutdownTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers. Default: 30s.
	ReadHeaderTimeout time.Duration
	// Logger receives start, shutdown, certificate reload and TLS errors.
	// Default (nil): nothing is logged.
	Logger *slog.Logger
}

// DefaultAddr is the address ListenAndServe listens on when Addr is empty:
// port 8443 of the loopback interface, so that a webhook started on a
// workstation cannot be reached from the network.
const DefaultAddr = "127.0.0.1:8443"

// ListenAndServe loads the certificate, listens on Addr and serves until ctx
// is done, then shuts down gracefully. It returns nil after a shutdown
// caused by ctx, and the error otherwise.
func (s *Server) ListenAndServe(ctx context.Context) error {
	cfg, err := s.tlsConfig()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.listenAddr())
	if err != nil {
		return err
	}
	return s.serve(ctx, ln, cfg)
}

func (s *Server) listenAddr() string {
	if s.Addr == "" {
		return DefaultAddr
	}
	return s.Addr
}

// Serve is ListenAndServe on a listener the caller made (for example on
// port 0 in a test). It closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	cfg, err := s.tlsConfig()
	if err != nil {
		_ = ln.Close()
		return err
	}
	return s.serve(ctx, ln, cfg)
}

func (s *Server) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// tlsConfig returns the configuration to serve with, loading the key pair.
func (s *Server) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.TLSConfig != nil {
		cfg = s.TLSConfig.Clone()
	}
	if s.CertFile == "" && s.KeyFile == "" {
		if len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil {
			return nil, errors.New("webhook: Server needs CertFile and KeyFile or a TLSConfig with a certificate")
		}
		return cfg, nil
	}
	reloader, err := newCertReloader(s.CertFile, s.KeyFile, s.logger())
	if err != nil {
		return nil, err
	}
	cfg.Certificates = nil
	cfg.GetCertificate = reloader.GetCertificate
	return cfg, nil
}

func (s *Server) serve(ctx context.Context, ln net.Listener, cfg *tls.Config) error {
	var ready atomic.Bool
	handler := s.Handler
	if handler == nil {
		handler = http.NotFoundHandler()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	mux.Handle("/", handler)
	// Requests keep running when ctx is done, until the shutdown timeout.
	base, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	srv := &http.Server{
		Handler:           mux,
		TLSConfig:         cfg,
		ReadHeaderTimeout: orDefault(s.ReadHeaderTimeout, 30*time.Second),
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.logger().Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	ready.Store(true)
	s.logger().Info("webhook server listening", "address", ln.Addr().String())
	go func() { served <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	ready.Store(false)
	s.logger().Info("webhook server shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), orDefault(s.ShutdownTimeout, 30*time.Second))
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		cancelRequests()
		_ = srv.Close()
	}
	<-served
	return nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
