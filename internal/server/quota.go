package server

import (
	"context"
	"time"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/pkg/quota"
	"github.com/admitd/admitd/pkg/storage"
)

// QuotaOptions configure the resource quota controller, which
// kube-controller-manager runs beside kube-apiserver.
type QuotaOptions struct {
	// Controller runs it (--quota-controller, on by default in admitd
	// serve: a cluster has kube-controller-manager beside kube-apiserver,
	// and without it a new quota has no status and enforces nothing). Off
	// in the zero Options (testenv, as envtest's kube-apiserver alone) and
	// with --quota-controller=false, as the conformance recordings of a
	// kube-apiserver alone assume.
	Controller bool
	// Resync is how often every quota is recalculated
	// (--resource-quota-sync-period); 0 means 5 minutes.
	Resync time.Duration
}

// DefaultQuotaResync is kube-controller-manager's default
// --resource-quota-sync-period.
const DefaultQuotaResync = controllers.DefaultQuotaResync

// startQuotaController runs the controller until ctx ends, when enabled; it
// writes as kube-controller-manager's resourcequota-controller user.
func startQuotaController(ctx context.Context, p *apiParts, store storage.Store, o Options) error {
	if !o.Quota.Controller {
		return nil
	}
	log := o.Logger.With("controller", "resourcequota")
	client, err := controllers.NewClient(controllerLoopback(ctx, p.api, controllers.ResourceQuotaUser, log))
	if err != nil {
		return err
	}
	go controllers.NewResourceQuota(store, p.cat, client, quota.OptionsFor(p.adm.gates), o.Quota.Resync, log).Run(ctx)
	return nil
}
