package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/ephemeral"
	"github.com/admitd/admitd/internal/controllers/ttl"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// startEphemeralVolumeController runs kube-controller-manager's
// ephemeral-volume-controller until ctx ends, when the selection turns it
// on: the claims of pods' generic ephemeral volumes.
// Its two counters are served from then on.
func startEphemeralVolumeController(ctx context.Context, p *apiParts, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(ephemeral.Name) {
		return nil
	}
	if err := p.ephemeralMetrics.Register(p.metrics); err != nil {
		return err
	}
	l := log.With("controller", ephemeral.Name)
	rt := controllerLoopback(ctx, p.api, ephemeral.User, l)
	client, err := controllers.NewClientset(rt)
	if err != nil {
		return err
	}
	recorder, err := controllers.NewEventRecorder(ctx, rt, ephemeral.Component, l)
	if err != nil {
		return err
	}
	c, err := ephemeral.New(ephemeral.Config{Store: p.store, Catalogue: p.cat, Caches: caches, Client: client, Recorder: recorder, Log: l, Metrics: p.ephemeralMetrics})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}

// startTTLController runs kube-controller-manager's ttl-controller until
// ctx ends, when the selection turns it on: every Node's
// node.alpha.kubernetes.io/ttl annotation.
func startTTLController(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(ttl.Name) {
		return nil
	}
	l := log.With("controller", ttl.Name)
	client, err := controllers.NewClientset(controllerLoopback(ctx, api, ttl.User, l))
	if err != nil {
		return err
	}
	c, err := ttl.New(ttl.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Log: l})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
