package server

import (
	"context"
	"maps"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/backgroundaudit"
	"github.com/admitd/admitd/internal/dashboard"
	"github.com/admitd/admitd/pkg/admission/trace"
	"github.com/admitd/admitd/pkg/lint"
)

// dashboardUser is who the dashboard reads the admission configuration
// as, through the loopback (never from the network). Whoever may open the
// dashboard sees that configuration; RBAC grants the dashboard itself (see
// dashboard.ClusterRoleRules).
var dashboardUser = authenticationv1.UserInfo{Username: "system:admitd:dashboard", Groups: []string{"system:masters", "system:authenticated"}}

// compliance serves the scanner's results to the dashboard; nil when the
// background audit is off.
func compliance(scanner *backgroundaudit.Scanner) func() any {
	if scanner == nil {
		return nil
	}
	return func() any { return scanner.Results() }
}

// mountDashboard keeps the admission traces (mountTraces), mounts the
// dashboard at dashboard.Path behind the server's authentication and
// authorization, and feeds it every traced request until ctx ends; it
// shows the scanner's results when there is one.
func mountDashboard(ctx context.Context, cfg *apiserver.Config, o Options, parts *apiParts, scanner *backgroundaudit.Scanner) {
	var dash *dashboard.Dashboard
	ring := mountTraces(cfg, o, func(e *trace.Entry, ev *apiserver.RequestEvent) {
		dash.Observe(e, ev.Record, ev.Finished.Sub(ev.Started))
	})
	loopback := &rest.Config{Host: "http://admitd.loopback", Transport: parts.loopback(dashboardUser), QPS: -1}
	dash = dashboard.New(dashboard.Options{
		Configuration: func(ctx context.Context) (*lint.Set, error) { return lint.FromServer(ctx, loopback) },
		Schemas:       cfg.Catalogue.PolicySchemas(),
		Traces:        ring,
		Compliance:    compliance(scanner),
		Logger:        o.Logger.With("component", "dashboard"),
	})
	maps.Copy(cfg.Extra, dash.Routes())
	cfg.LongRunningPaths = append(cfg.LongRunningPaths, dashboard.EventsPath)
	go dash.Run(ctx)
}
