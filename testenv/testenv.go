// Package testenv starts a whole admitd inside the test process — the real
// API server, storage and admission chain, on 127.0.0.1 with in-memory
// storage — and serves webhooks next to it, so that a webhook, a policy or a
// client can be tested behind the real dispatcher in an ordinary `go test`:
// envtest without downloads or binaries. An environment starts in a few
// milliseconds (see BenchmarkStart), so each test can have its own.
//
//	func TestDenyConfigMaps(t *testing.T) {
//		env := testenv.Start(t)
//		hook := env.ServeWebhook(t, myHandler)
//		env.RegisterValidating(t, "deny.example.com", hook, testenv.Rule("configmaps", admissionregistrationv1.Create))
//		_, err := env.Client().CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
//		// err is the webhook's denial
//	}
//
// Authorization is Node,RBAC with the bootstrap policy (envtest's
// kube-apiserver runs RBAC; the Node authorizer only concerns kubelets):
// Config's administrator is in system:masters and may do
// everything, so tests that only use it see no difference; a test can act
// as another user through impersonation (rest.Config.Impersonate) and gets
// what RBAC grants that user (and a kubelet, system:node:<name> in
// system:nodes, what the Node authorizer grants it). WithAuthorizationModes
// changes the modes.
//
// It is for tests: certificates are generated per environment, nothing is
// persisted, and no controllers other than admitd's own run (no scheduler,
// no kubelet: pods are stored, never run). It sits at the top of the module,
// beside cmd, because it starts the server; no library imports it.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/internal/server"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// Env is a running admitd.
type Env struct {
	// Config connects as an administrator (group system:masters), without
	// client-side rate limiting.
	Config *rest.Config
	// URL is the https address of the API server.
	URL string
	// CAPEM is the CA that issued the API server's certificate.
	CAPEM []byte

	srv     *server.Server
	dataDir string

	clientOnce sync.Once
	client     kubernetes.Interface

	caOnce sync.Once
	ca     *webhooktest.CA // issues the certificates of ServeWebhook
	caErr  error
}

// Option adjusts an environment.
type Option func(*settings)

// settings are what Options adjust: the server's options.
type settings struct{ server server.Options }

// WithLogger sends the server's logs to l. Start's default writes warnings
// and errors to the test's output; New's discards them.
func WithLogger(l *slog.Logger) Option {
	return func(s *settings) { s.server.Logger = l }
}

// WithAdmissionPlugins enables compiled-in admission plugins beyond the
// default set, as kube-apiserver's --enable-admission-plugins.
func WithAdmissionPlugins(names ...string) Option {
	return func(s *settings) { s.server.EnableAdmissionPlugins = append(s.server.EnableAdmissionPlugins, names...) }
}

// WithoutPrivileged refuses privileged containers, as kube-apiserver does
// without --allow-privileged (the environment allows them by default, as
// envtest does).
func WithoutPrivileged() Option {
	return func(s *settings) { s.server.AllowPrivileged = false }
}

// WithAuthorizationModes sets the authorizers, as kube-apiserver's
// --authorization-mode (default Node,RBAC); for example AlwaysAllow lets every
// user do everything.
func WithAuthorizationModes(modes ...string) Option {
	return func(s *settings) { s.server.AuthorizationModes = modes }
}

// WithoutAdmissionPlugins disables admission plugins of the default set, as
// kube-apiserver's --disable-admission-plugins.
func WithoutAdmissionPlugins(names ...string) Option {
	return func(s *settings) {
		s.server.DisableAdmissionPlugins = append(s.server.DisableAdmissionPlugins, names...)
	}
}

// Start starts an environment for the test and stops it when the test ends;
// it fails the test if the server cannot start.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	out := &testOutput{w: t.Output()}
	t.Cleanup(out.stop) // runs after Close: cleanups run last-in, first-out
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	env, err := New(append([]Option{WithLogger(logger)}, opts...)...)
	if err != nil {
		t.Fatalf("starting admitd: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Close(); err != nil {
			t.Errorf("stopping admitd: %v", err)
		}
	})
	return env
}

// New starts an environment outside a test, for TestMain or an Example;
// Close stops it.
func New(opts ...Option) (*Env, error) {
	dir, err := os.MkdirTemp("", "admitd-testenv-")
	if err != nil {
		return nil, err
	}
	s := settings{server: server.DefaultOptions()}
	s.server.AllowPrivileged = true // as envtest runs kube-apiserver
	s.server.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, opt := range opts {
		opt(&s)
	}
	o := s.server
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = dir, 0, "memory", "-"
	srv, err := server.Start(context.Background(), o)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	cfg := &rest.Config{
		Host: srv.URL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: srv.CAPEM, CertData: srv.AdminCertPEM, KeyData: srv.AdminKeyPEM,
		},
		QPS: -1, // no client-side rate limiting
	}
	return &Env{Config: cfg, URL: srv.URL, CAPEM: srv.CAPEM, srv: srv, dataDir: dir}, nil
}

// Close stops the server and removes its certificates.
func (e *Env) Close() error {
	return errors.Join(e.srv.Close(), os.RemoveAll(e.dataDir))
}

// Client returns a clientset for Config, created on first use.
func (e *Env) Client() kubernetes.Interface {
	e.clientOnce.Do(func() { e.client = kubernetes.NewForConfigOrDie(e.Config) })
	return e.client
}

// webhookCA returns the CA that issues webhook certificates, created on
// first use. It is not the API server's CA: a webhook's caBundle trusts
// only webhooks.
func (e *Env) webhookCA() (*webhooktest.CA, error) {
	e.caOnce.Do(func() {
		e.ca, e.caErr = webhooktest.NewCA("admitd-testenv-webhooks")
		if e.caErr != nil {
			e.caErr = fmt.Errorf("creating the webhook CA: %w", e.caErr)
		}
	})
	return e.ca, e.caErr
}

// testOutput writes to a test's output until the test ends, and drops
// what the server's goroutines log after that.
type testOutput struct {
	mu      sync.Mutex
	w       io.Writer
	stopped bool
}

func (o *testOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return len(p), nil
	}
	return o.w.Write(p)
}

func (o *testOutput) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopped = true
}
