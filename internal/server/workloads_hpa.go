package server

import (
	"context"
	"log/slog"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/hpa"
)

// startHPAController runs kube-controller-manager's
// horizontal-pod-autoscaler-controller until ctx ends, when the selection
// turns it on: targets kept within their autoscalers' bounds and scaled
// by the metrics APIs an APIService serves (none is served by admitd
// itself, so without one an autoscaler reports upstream's failures to get
// metrics). It acts as the horizontal-pod-autoscaler service account
// (bootstrap RBAC's system:controller:horizontal-pod-autoscaler), through
// admission. Its horizontal_pod_autoscaler_controller series are served
// from then on.
func startHPAController(ctx context.Context, p *apiParts, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(hpa.Name) {
		return nil
	}
	if err := p.hpaMetrics.Register(p.metrics); err != nil {
		return err
	}
	l := log.With("controller", hpa.Name)
	rt := controllerLoopback(ctx, p.api, hpa.User, l)
	recorder, err := controllers.NewEventRecorder(ctx, rt, hpa.Component, l)
	if err != nil {
		return err
	}
	c, err := hpa.New(hpa.Config{Store: p.store, Catalogue: p.cat, Caches: caches, Transport: rt, Recorder: recorder, Log: l, Metrics: p.hpaMetrics})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
