package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/resourceclaim"
)

// startResourceClaimController runs kube-controller-manager's
// resourceclaim-controller until ctx ends, when the selection turns it on
// and the DynamicResourceAllocation gate is on (upstream's condition; on
// by default in 1.37): the ResourceClaims of pods' claim templates, and
// the release of claims whose pods are gone or done. It acts as the
// resource-claim-controller service account (bootstrap RBAC's
// system:controller:resource-claim-controller), through admission. Its
// dynamic_resource_allocation series are served from then on.
func startResourceClaimController(ctx context.Context, p *apiParts, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(resourceclaim.Name) || !p.adm.gates.Enabled("DynamicResourceAllocation") {
		return nil
	}
	if err := p.resourceClaimMetrics.Register(p.metrics); err != nil {
		return err
	}
	l := log.With("controller", resourceclaim.Name)
	rt := controllerLoopback(ctx, p.api, resourceclaim.User, l)
	client, err := controllers.NewClientset(rt)
	if err != nil {
		return err
	}
	recorder, err := controllers.NewEventRecorder(ctx, rt, resourceclaim.Component, l)
	if err != nil {
		return err
	}
	c, err := resourceclaim.New(resourceclaim.Config{Store: p.store, Catalogue: p.cat, Caches: caches, Client: client,
		Recorder: recorder, Log: l, Metrics: p.resourceClaimMetrics,
		PrioritizedListOff: !p.adm.gates.Enabled("DRAPrioritizedList")})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
