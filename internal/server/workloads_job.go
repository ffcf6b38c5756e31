package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/job"
	"github.com/admitd/admitd/internal/controllers/ttlafterfinished"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// startJobControllers runs the Job controller and the TTL-after-finished
// controller the selection turns on until ctx ends, as
// kube-controller-manager's job-controller and ttl-after-finished-controller.
func startJobControllers(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if sel.Enabled(job.Name) {
		l := log.With("controller", job.Name)
		rt := controllerLoopback(ctx, api, job.User, l)
		client, err := controllers.NewClientset(rt)
		if err != nil {
			return err
		}
		recorder, err := controllers.NewEventRecorder(ctx, rt, job.Component, l)
		if err != nil {
			return err
		}
		c, err := job.New(job.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Recorder: recorder, Log: l})
		if err != nil {
			return err
		}
		go c.Run(ctx)
	}
	if sel.Enabled(ttlafterfinished.Name) {
		client, err := controllers.NewClientset(controllerLoopback(ctx, api, ttlafterfinished.User, log))
		if err != nil {
			return err
		}
		c, err := ttlafterfinished.New(ttlafterfinished.Config{Store: store, Catalogue: cat, Caches: caches, Client: client,
			Log: log.With("controller", ttlafterfinished.Name)})
		if err != nil {
			return err
		}
		go c.Run(ctx)
	}
	return nil
}
