package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/admitd/admitd/internal/controllers"
)

// LeaderElectionOptions are kube-controller-manager's --leader-elect*
// flags: when several admitd instances share one etcd, the controllers run
// on the one instance that holds a coordination.k8s.io/v1 Lease, and move
// to another when it stops renewing it.
type LeaderElectionOptions struct {
	// Enabled is --leader-elect (default true). It matters only with
	// --etcd-servers: an embedded store serves a single instance, whose
	// controllers always run.
	Enabled bool
	// LeaseDuration is how long the other candidates wait after the last
	// renewal before taking the lease over; default 15s.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps retrying a renewal before
	// it stops its controllers; default 10s.
	RenewDeadline time.Duration
	// RetryPeriod is the wait between attempts to acquire or renew;
	// default 2s.
	RetryPeriod time.Duration
	// ResourceName and ResourceNamespace name the Lease; default
	// kube-system/kube-controller-manager, kube-controller-manager's own,
	// so that admitd and a kube-controller-manager on one etcd never
	// run the same controllers twice.
	ResourceName      string
	ResourceNamespace string
}

// Defaults of LeaderElectionOptions, kube-controller-manager's.
const (
	DefaultLeaseDuration          = 15 * time.Second
	DefaultRenewDeadline          = 10 * time.Second
	DefaultRetryPeriod            = 2 * time.Second
	DefaultLeaderElectionName     = "kube-controller-manager"
	DefaultLeaderElectionNamepace = "kube-system"
)

// DefaultLeaderElectionOptions returns kube-controller-manager's defaults.
func DefaultLeaderElectionOptions() LeaderElectionOptions {
	return LeaderElectionOptions{Enabled: true, LeaseDuration: DefaultLeaseDuration, RenewDeadline: DefaultRenewDeadline,
		RetryPeriod: DefaultRetryPeriod, ResourceName: DefaultLeaderElectionName, ResourceNamespace: DefaultLeaderElectionNamepace}
}

// withDefaults fills the zero fields.
func (o LeaderElectionOptions) withDefaults() LeaderElectionOptions {
	d := DefaultLeaderElectionOptions()
	if o.LeaseDuration == 0 {
		o.LeaseDuration = d.LeaseDuration
	}
	if o.RenewDeadline == 0 {
		o.RenewDeadline = d.RenewDeadline
	}
	if o.RetryPeriod == 0 {
		o.RetryPeriod = d.RetryPeriod
	}
	if o.ResourceName == "" {
		o.ResourceName = d.ResourceName
	}
	if o.ResourceNamespace == "" {
		o.ResourceNamespace = d.ResourceNamespace
	}
	return o
}

// leaderElected reports whether the controllers of a server with options o
// wait for the lease.
func leaderElected(o Options) bool {
	return o.LeaderElection.Enabled && len(o.Etcd.Servers) > 0
}

// elector runs the controllers while this instance holds the lease.
type elector struct {
	config leaderelection.LeaderElectionConfig
	log    *slog.Logger
}

// newElector prepares the election of o through rt (the loopback as
// kube-controller-manager, whom the bootstrap policy lets hold its lease),
// as the candidate <hostname>_<uuid>, as kube-controller-manager names
// itself.
func newElector(o LeaderElectionOptions, rt http.RoundTripper, log *slog.Logger) (*elector, error) {
	o = o.withDefaults()
	client, err := coordinationv1client.NewForConfigAndClient(&rest.Config{Host: "http://loopback", QPS: -1, UserAgent: "admitd-controller-manager"},
		&http.Client{Transport: rt})
	if err != nil {
		return nil, err
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("leader election identity: %w", err)
	}
	id := host + "_" + string(uuid.NewUUID())
	lock := &resourcelock.LeaseLock{Client: client, LockConfig: resourcelock.ResourceLockConfig{Identity: id}}
	lock.LeaseMeta.Namespace, lock.LeaseMeta.Name = o.ResourceNamespace, o.ResourceName
	cfg := leaderelection.LeaderElectionConfig{Lock: lock, Name: o.ResourceName, ReleaseOnCancel: true,
		LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod}
	check := cfg
	check.Callbacks = leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}}
	if _, err := leaderelection.NewLeaderElector(check); err != nil { // checks the durations
		return nil, fmt.Errorf("leader election: %w", err)
	}
	return &elector{config: cfg, log: log.With("lease", o.ResourceNamespace+"/"+o.ResourceName, "identity", id)}, nil
}

// run competes for the lease until ctx ends, running start(term) on every
// acquisition; term ends when the lease is lost (the controllers stop) and
// this instance becomes a candidate again. It returns once the lease is
// released.
func (e *elector) run(ctx context.Context, start func(term context.Context) error) {
	// client-go's elector logs through the context's logger: ours
	ctx = klog.NewContext(ctx, logr.FromSlogHandler(e.log.Handler()))
	for ctx.Err() == nil {
		cfg := e.config
		cfg.Callbacks = leaderelection.LeaderCallbacks{
			OnStartedLeading: func(term context.Context) {
				e.log.Info("leading: starting the controllers")
				if err := start(term); err != nil {
					e.log.Error("starting the controllers", "err", err)
				}
			},
			OnStoppedLeading: func() { e.log.Info("not leading: controllers stopped") },
		}
		le, err := leaderelection.NewLeaderElector(cfg)
		if err != nil {
			e.log.Error("leader election", "err", err)
			return
		}
		le.Run(ctx)
	}
}

// startElectedControllers starts the controllers: the API server's own
// (apiServer) then kube-controller-manager's (manager), now, or
// (leaderElected) in the background while this instance holds the lease.
// done is closed once the lease is released after ctx ends. Without
// leader election the API server's controllers start now, before the
// server serves (/readyz waits for their first runs, as kube-apiserver's
// for its post-start hooks), and the manager's when the caller calls
// startManager: once the server serves, since kube-apiserver's readiness
// never waits for kube-controller-manager, and before Start returns, so a
// testenv user, or a test, starts from a server whose controllers run
// and have made their first writes (kube-root-ca.crt and the default
// ServiceAccount in every namespace; waitFirstPasses), so the caller's own
// webhooks never see them. With leader election startManager does
// nothing.
func startElectedControllers(ctx context.Context, o Options, p *apiParts, apiServer, manager func(context.Context) error) (done <-chan struct{}, startManager func() error, err error) {
	finished := make(chan struct{})
	if !leaderElected(o) {
		close(finished)
		if err := apiServer(ctx); err != nil {
			return nil, nil, err
		}
		return finished, func() error { return manager(ctx) }, nil
	}
	e, err := newElector(o.LeaderElection, p.api.Loopback(controllers.TokensUser), o.Logger.With("component", "leader-election"))
	if err != nil {
		return nil, nil, err
	}
	go func() {
		defer close(finished)
		e.run(ctx, func(term context.Context) error {
			if err := apiServer(term); err != nil {
				return err
			}
			return manager(term)
		})
	}()
	return finished, func() error { return nil }, nil
}
