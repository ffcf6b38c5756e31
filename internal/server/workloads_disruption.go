package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/disruption"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// startDisruptionController runs the disruption controller, if the
// selection turns it on, until ctx ends, as kube-controller-manager's
// disruption-controller: it keeps PodDisruptionBudgets' status, which
// the pods/eviction subresource reads.
func startDisruptionController(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(disruption.Name) {
		return nil
	}
	log = log.With("controller", disruption.Name)
	rt := controllerLoopback(ctx, api, disruption.User, log)
	client, err := controllers.NewClientset(rt)
	if err != nil {
		return err
	}
	recorder, err := controllers.NewEventRecorder(ctx, rt, disruption.Component, log)
	if err != nil {
		return err
	}
	c, err := disruption.New(disruption.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Recorder: recorder, Log: log})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
