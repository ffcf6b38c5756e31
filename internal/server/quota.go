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
	// Controller runs it (--quota-controller). Off by default: a
	// kube-apiserver alone leaves quota status to whoever writes it, and
	// the conformance recordings are of a kube-apiserver alone.
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
	gates, err := featureGates(o.FeatureGates)
	if err != nil {
		return err
	}
	client, err := controllers.NewClient(p.api.Loopback(controllers.ResourceQuotaUser))
	if err != nil {
		return err
	}
	log := o.Logger.With("controller", "resourcequota")
	go controllers.NewResourceQuota(store, p.cat, client, quota.OptionsFor(gates), o.Quota.Resync, log).Run(ctx)
	return nil
}
