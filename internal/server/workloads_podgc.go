package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/podgc"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// PodGCOptions configure the pod garbage collector
// (pod-garbage-collector-controller).
type PodGCOptions struct {
	// TerminatedPodThreshold is kube-controller-manager's
	// --terminated-pod-gc-threshold: how many terminated pods may exist
	// before the oldest are deleted; 0 or less keeps them all. Nil means
	// its default, 12500.
	TerminatedPodThreshold *int
	// CheckPeriod and QuarantineTime are the time between the collector's
	// passes and how long a node must be missing before its pods go, fixed
	// in kube-controller-manager (20s and 40s, the defaults when zero);
	// shorter ones are for tests.
	CheckPeriod, QuarantineTime time.Duration
}

func (o PodGCOptions) threshold() int {
	if o.TerminatedPodThreshold == nil {
		return podgc.DefaultTerminatedPodThreshold
	}
	return *o.TerminatedPodThreshold
}

// startPodGCAndCSRSigning starts the pod garbage collector and the CSR
// signer, cleaner and approver the selection turns on.
func startPodGCAndCSRSigning(ctx context.Context, p *apiParts, store storage.Store, caches *controllers.Caches, o Options, plan controllerPlan) error {
	sel := plan.sel
	if err := startPodGC(ctx, p.api, store, p.cat, caches, o.PodGC, sel, o.Logger); err != nil {
		return fmt.Errorf("starting the pod garbage collector: %w", err)
	}
	if err := startCSRSigning(ctx, p.api, store, p.cat, caches, o, plan.signerCAs); err != nil {
		return fmt.Errorf("starting the CSR signer: %w", err)
	}
	if err := startCSRCleaner(ctx, p.api, store, p.cat, caches, sel, o.Logger); err != nil {
		return fmt.Errorf("starting the CSR cleaner: %w", err)
	}
	if err := startCSRApproving(ctx, p.api, store, p.cat, caches, sel, o.Logger); err != nil {
		return fmt.Errorf("starting the CSR approver: %w", err)
	}
	return nil
}

// startPodGC runs the pod garbage collector, if the selection turns it on,
// until ctx ends, as kube-controller-manager's
// pod-garbage-collector-controller.
func startPodGC(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caches *controllers.Caches, o PodGCOptions, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(podgc.Name) {
		return nil
	}
	log = log.With("controller", podgc.Name)
	client, err := controllers.NewClientset(controllerLoopback(ctx, api, podgc.User, log))
	if err != nil {
		return err
	}
	quarantine := o.QuarantineTime
	if quarantine <= 0 {
		quarantine = podgc.DefaultQuarantineTime
	}
	c, err := podgc.New(podgc.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Log: log,
		TerminatedPodThreshold: o.threshold(), CheckPeriod: o.CheckPeriod, QuarantineTime: quarantine})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
