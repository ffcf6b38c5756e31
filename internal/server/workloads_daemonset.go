package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/daemonset"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// startDaemonSetController runs the DaemonSet controller until ctx ends,
// as kube-controller-manager's daemonset-controller.
func startDaemonSetController(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caches *controllers.Caches, log *slog.Logger) error {
	rt := controllerLoopback(ctx, api, daemonset.User, log)
	client, err := controllers.NewClientset(rt)
	if err != nil {
		return err
	}
	recorder, err := controllers.NewEventRecorder(ctx, rt, daemonset.Component, log)
	if err != nil {
		return err
	}
	c, err := daemonset.New(daemonset.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Recorder: recorder, Log: log})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
