package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/endpoints"
	"github.com/admitd/admitd/internal/controllers/endpointslice"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// startEndpointsControllers runs the EndpointSlice and Endpoints
// controllers the selection turns on until ctx ends, each writing (and
// recording its events) through the loopback client as its
// kube-controller-manager service account.
func startEndpointsControllers(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if sel.Enabled(endpointslice.Name) {
		l := log.With("controller", endpointslice.Name)
		rt := controllerLoopback(ctx, api, endpointslice.User, l)
		client, err := controllers.NewClientset(rt)
		if err != nil {
			return err
		}
		recorder, err := controllers.NewEventRecorder(ctx, rt, endpointslice.Component, l)
		if err != nil {
			return err
		}
		c, err := endpointslice.New(endpointslice.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Recorder: recorder, Log: l})
		if err != nil {
			return err
		}
		go c.Run(ctx)
	}
	if sel.Enabled(endpoints.Name) {
		l := log.With("controller", endpoints.Name)
		rt := controllerLoopback(ctx, api, endpoints.User, l)
		client, err := controllers.NewClientset(rt)
		if err != nil {
			return err
		}
		recorder, err := controllers.NewEventRecorder(ctx, rt, endpoints.Component, l)
		if err != nil {
			return err
		}
		c, err := endpoints.New(endpoints.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Recorder: recorder, Log: l})
		if err != nil {
			return err
		}
		go c.Run(ctx)
	}
	return nil
}
