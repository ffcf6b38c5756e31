package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/nodelifecycle"
	"github.com/admitd/admitd/internal/controllers/tainteviction"
)

// NodeLifecycleOptions configure the node lifecycle controller
// (node-lifecycle-controller) as kube-controller-manager's flags of the
// same names; zero durations and thresholds are its defaults.
type NodeLifecycleOptions struct {
	// MonitorPeriod, MonitorGracePeriod and StartupGracePeriod are
	// --node-monitor-period (5s), --node-monitor-grace-period (50s) and
	// --node-startup-grace-period (60s).
	MonitorPeriod, MonitorGracePeriod, StartupGracePeriod time.Duration
	// EvictionRate and SecondaryEvictionRate are --node-eviction-rate
	// (0.1 nodes a second) and --secondary-node-eviction-rate (0.01);
	// nil is the default; 0 is kube-controller-manager's 0 (one node
	// tainted NoExecute per zone, then none).
	EvictionRate, SecondaryEvictionRate *float32
	// LargeClusterThreshold and UnhealthyZoneThreshold are
	// --large-cluster-size-threshold (50) and --unhealthy-zone-threshold
	// (0.55).
	LargeClusterThreshold  int
	UnhealthyZoneThreshold float32
}

// startNodeLifecycleController runs kube-controller-manager's
// node-lifecycle-controller until ctx ends, when the selection turns it
// on: nodes that stop reporting become Unknown and are tainted, their
// pods not ready. Its node_collector series are served from then on.
func startNodeLifecycleController(ctx context.Context, p *apiParts, caches *controllers.Caches, o NodeLifecycleOptions, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(nodelifecycle.Name) {
		return nil
	}
	if err := p.nodeLifecycleMetrics.Register(p.metrics); err != nil {
		return err
	}
	l := log.With("controller", nodelifecycle.Name)
	rt := controllerLoopback(ctx, p.api, nodelifecycle.User, l)
	client, err := controllers.NewClientset(rt)
	if err != nil {
		return err
	}
	recorder, err := controllers.NewEventRecorder(ctx, rt, nodelifecycle.Component, l)
	if err != nil {
		return err
	}
	c, err := nodelifecycle.New(nodelifecycle.Config{Store: p.store, Catalogue: p.cat, Caches: caches, Client: client, Recorder: recorder,
		Log: l, Metrics: p.nodeLifecycleMetrics,
		MonitorPeriod: o.MonitorPeriod, MonitorGracePeriod: o.MonitorGracePeriod, StartupGracePeriod: o.StartupGracePeriod,
		EvictionRate: explicitRate(o.EvictionRate), SecondaryEvictionRate: explicitRate(o.SecondaryEvictionRate),
		LargeClusterThreshold: o.LargeClusterThreshold, UnhealthyZoneThreshold: o.UnhealthyZoneThreshold})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}

// explicitRate is an option's rate for nodelifecycle.Config, where zero
// means the default and a negative rate the flag's 0.
func explicitRate(r *float32) float32 {
	switch {
	case r == nil:
		return 0
	case *r == 0:
		return -1
	}
	return *r
}

// startTaintEvictionController runs kube-controller-manager's
// taint-eviction-controller until ctx ends, when the selection turns it
// on: pods on nodes with NoExecute taints they do not tolerate are
// deleted, at once or after their tolerationSeconds. It runs with the
// node-controller's credentials, as upstream's.
func startTaintEvictionController(ctx context.Context, p *apiParts, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(tainteviction.Name) {
		return nil
	}
	if err := p.taintEvictionMetrics.Register(p.metrics); err != nil {
		return err
	}
	l := log.With("controller", tainteviction.Name)
	rt := controllerLoopback(ctx, p.api, tainteviction.User, l)
	client, err := controllers.NewClientset(rt)
	if err != nil {
		return err
	}
	recorder, err := controllers.NewEventRecorder(ctx, rt, tainteviction.Component, l)
	if err != nil {
		return err
	}
	c, err := tainteviction.New(tainteviction.Config{Store: p.store, Catalogue: p.cat, Caches: caches, Client: client, Recorder: recorder,
		Log: l, Metrics: p.taintEvictionMetrics, ComparisonOperators: p.adm.gates.Enabled("TaintTolerationComparisonOperators")})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
