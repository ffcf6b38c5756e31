package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/statefulset"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// startStatefulSetController runs the StatefulSet controller, if the
// selection turns it on, until ctx ends, as kube-controller-manager's
// statefulset-controller.
func startStatefulSetController(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(statefulset.Name) {
		return nil
	}
	log = log.With("controller", statefulset.Name)
	rt := controllerLoopback(ctx, api, statefulset.User, log)
	client, err := controllers.NewClientset(rt)
	if err != nil {
		return err
	}
	recorder, err := controllers.NewEventRecorder(ctx, rt, statefulset.Component, log)
	if err != nil {
		return err
	}
	c, err := statefulset.New(statefulset.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Recorder: recorder, Log: log})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
