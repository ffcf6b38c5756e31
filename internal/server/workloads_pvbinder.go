package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/pvbinder"
)

// startPVBinderController runs kube-controller-manager's
// persistentvolume-binder-controller until ctx ends, when the selection
// turns it on: claims bound to volumes, released volumes reclaimed,
// claims handed to their class's provisioner. It writes as the
// persistent-volume-binder service account (bootstrap RBAC's
// system:controller:persistent-volume-binder), through admission. Its
// pv_collector series are served from then on.
func startPVBinderController(ctx context.Context, p *apiParts, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(pvbinder.Name) {
		return nil
	}
	if err := p.pvBinderMetrics.Register(p.metrics); err != nil {
		return err
	}
	l := log.With("controller", pvbinder.Name)
	rt := controllerLoopback(ctx, p.api, pvbinder.User, l)
	client, err := controllers.NewClientset(rt)
	if err != nil {
		return err
	}
	recorder, err := controllers.NewEventRecorder(ctx, rt, pvbinder.Component, l)
	if err != nil {
		return err
	}
	c, err := pvbinder.New(pvbinder.Config{Store: p.store, Catalogue: p.cat, Caches: caches, Client: client, Recorder: recorder, Log: l, Metrics: p.pvBinderMetrics})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
