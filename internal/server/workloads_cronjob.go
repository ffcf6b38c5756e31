package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/cronjob"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// startCronJobController runs the CronJob controller, if the selection
// turns it on, until ctx ends, as kube-controller-manager's
// cronjob-controller.
func startCronJobController(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(cronjob.Name) {
		return nil
	}
	log = log.With("controller", cronjob.Name)
	rt := controllerLoopback(ctx, api, cronjob.User, log)
	client, err := controllers.NewClientset(rt)
	if err != nil {
		return err
	}
	recorder, err := controllers.NewEventRecorder(ctx, rt, cronjob.Component, log)
	if err != nil {
		return err
	}
	c, err := cronjob.New(cronjob.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Recorder: recorder, Log: log})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
