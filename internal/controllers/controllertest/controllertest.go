// Package controllertest is the environment of the workload controllers'
// unit tests: an in-process API server over memory storage, with
// loopback clients that write through its admission chain as a
// controller's service account or as an administrator, and a poll for
// what the controllers eventually do. It is for tests only; the e2e tests
// (test/e2e) run the whole admitd instead.
package controllertest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/ipallocator"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// Server is a bootstrapped in-process API server, stopped when its test
// ends.
type Server struct {
	t         testing.TB
	api       *apiserver.Server
	Store     storage.Store
	Catalogue *registry.Catalogue
	// Ctx ends when the test does: controllers run until then.
	Ctx context.Context
	// Log discards, or with -v logs at debug level to stderr.
	Log *slog.Logger
	// Admin is a client as a member of system:masters.
	Admin kubernetes.Interface
}

// AdminUser is the administrator Server.Admin acts as.
var AdminUser = func() authenticationv1.UserInfo {
	u := controllers.ControllerUser("admin")
	u.Groups = append(u.Groups, "system:masters")
	return u
}()

// Start starts a server whose admission chain is plugins (none: every
// request is admitted). Services get no cluster IP.
func Start(t testing.TB, plugins ...admission.NamedPlugin) *Server {
	t.Helper()
	return start(t, plugins, nil)
}

// StartWithClusterIPs is Start with Services given cluster IPs of family
// as admitd serve gives them: an IPAddress each (managed by
// ipallocator.k8s.io) from the ServiceCIDRs the test creates (there is no
// default one).
func StartWithClusterIPs(t testing.TB, family corev1.IPFamily, plugins ...admission.NamedPlugin) *Server {
	t.Helper()
	return start(t, plugins, func(s *Server, cfg *apiserver.Config) {
		cidrs, ips := s.sourceCache("servicecidrs"), s.sourceCache("ipaddresses")
		alloc, err := ipallocator.New(ipallocator.Config{Store: s.Store, Catalogue: s.Catalogue, Family: family, ServiceCIDRs: cidrs, IPAddresses: ips})
		if err != nil {
			t.Fatal(err)
		}
		cfg.ClusterIPs = alloc
	})
}

// start starts a server of plugins, its configuration changed by
// configure when not nil.
func start(t testing.TB, plugins []admission.NamedPlugin, configure func(*Server, *apiserver.Config)) *Server {
	t.Helper()
	s := &Server{t: t, Store: memory.New(), Catalogue: registry.NewCatalogue(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if testing.Verbose() {
		s.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Ctx = ctx
	cfg := apiserver.Config{Store: s.Store, Catalogue: s.Catalogue, Admission: admission.NewChain(plugins...)}
	if configure != nil {
		configure(s, &cfg)
	}
	s.api = apiserver.New(cfg)
	if err := s.api.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	s.Admin = s.Client(AdminUser)
	return s
}

// sourceCache is a watch-fed cache of the networking.k8s.io/v1 resource,
// as the server's admission sources keep, followed until the test ends.
func (s *Server) sourceCache(resource string) *admissionsource.Cache {
	res, ok := s.Catalogue.Lookup(networkingv1.SchemeGroupVersion.WithResource(resource))
	if !ok {
		s.t.Fatalf("%s are not served", resource)
	}
	cache := admissionsource.NewCache(s.Store, res)
	go cache.Run(s.Ctx, s.Log)
	return cache
}

// Client is a clientset writing as user through the server's loopback.
func (s *Server) Client(user authenticationv1.UserInfo) kubernetes.Interface {
	s.t.Helper()
	c, err := controllers.NewClientset(s.api.Loopback(user))
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// Loopback is the server's loopback transport acting as user, for a
// controller that builds its own clients (a scale or a metrics client).
func (s *Server) Loopback(user authenticationv1.UserInfo) http.RoundTripper {
	return s.api.Loopback(user)
}

// Controller is the client and the event recorder (events from component)
// of a controller acting as user, as the server wires one.
func (s *Server) Controller(user authenticationv1.UserInfo, component string) (kubernetes.Interface, record.EventRecorder) {
	s.t.Helper()
	recorder, err := controllers.NewEventRecorder(s.Ctx, s.api.Loopback(user), component, s.Log)
	if err != nil {
		s.t.Fatal(err)
	}
	return s.Client(user), recorder
}

// Eventually polls cond every 20 ms until it holds, failing the test
// with cond's last explanation when it has not after timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var ok bool
		if ok, last = cond(); ok {
			return
		}
	}
	t.Fatalf("%s: after %v %s", what, timeout, last)
}

// DenyPods is an admission plugin that refuses pod creates while On, as
// a policy would ("pods are refused").
type DenyPods struct{ On atomic.Bool }

// Handles: creates.
func (d *DenyPods) Handles(op admission.Operation) bool { return op == admission.Create }

// Validate refuses a pod create while d.On.
func (d *DenyPods) Validate(_ context.Context, a *admission.Attributes) error {
	if a.Resource.Resource != "pods" || a.Subresource != "" || !d.On.Load() {
		return nil
	}
	return admission.NewForbidden(a, errors.New("pods are refused"))
}

var _ admission.Validator = (*DenyPods)(nil)
