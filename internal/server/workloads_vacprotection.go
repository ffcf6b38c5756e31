package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/vacprotection"
)

// startVACProtectionController runs kube-controller-manager's
// volumeattributesclass-protection-controller until ctx ends, when the
// selection turns it on: a deleted VolumeAttributesClass keeps its
// kubernetes.io/vac-protection finalizer while a claim or volume names it.
// It acts as the volumeattributesclass-protection-controller service
// account (bootstrap RBAC's
// system:controller:volumeattributesclass-protection-controller), through
// admission.
func startVACProtectionController(ctx context.Context, p *apiParts, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(vacprotection.Name) {
		return nil
	}
	l := log.With("controller", vacprotection.Name)
	client, err := controllers.NewClientset(controllerLoopback(ctx, p.api, vacprotection.User, l))
	if err != nil {
		return err
	}
	c, err := vacprotection.New(vacprotection.Config{Store: p.store, Catalogue: p.cat, Caches: caches, Client: client, Log: l})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
