package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/servicecidrs"
)

// startServiceCIDRController runs kube-controller-manager's
// service-cidr-controller until ctx ends, when the selection turns it on:
// every ServiceCIDR's finalizer and Ready condition, and deletions held
// while a Service's address would be left in no range. It acts as the
// service-cidrs-controller service account (bootstrap RBAC's
// system:controller:service-cidrs-controller), through admission.
func startServiceCIDRController(ctx context.Context, p *apiParts, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(servicecidrs.Name) {
		return nil
	}
	l := log.With("controller", servicecidrs.Name)
	rt := controllerLoopback(ctx, p.api, servicecidrs.User, l)
	client, err := controllers.NewClientset(rt)
	if err != nil {
		return err
	}
	recorder, err := controllers.NewEventRecorder(ctx, rt, servicecidrs.Component, l)
	if err != nil {
		return err
	}
	c, err := servicecidrs.New(servicecidrs.Config{Store: p.store, Catalogue: p.cat, Caches: caches, Client: client, Recorder: recorder, Log: l})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
