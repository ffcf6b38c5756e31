package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/endpointslicemirroring"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// startEndpointSliceMirroringController runs the EndpointSlice mirroring
// controller, when the selection turns it on, until ctx ends, writing
// (and recording its events) through the loopback client as
// kube-controller-manager's endpointslicemirroring-controller.
func startEndpointSliceMirroringController(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(endpointslicemirroring.Name) {
		return nil
	}
	l := log.With("controller", endpointslicemirroring.Name)
	rt := controllerLoopback(ctx, api, endpointslicemirroring.User, l)
	client, err := controllers.NewClientset(rt)
	if err != nil {
		return err
	}
	recorder, err := controllers.NewEventRecorder(ctx, rt, endpointslicemirroring.Component, l)
	if err != nil {
		return err
	}
	c, err := endpointslicemirroring.New(endpointslicemirroring.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Recorder: recorder, Log: l})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
