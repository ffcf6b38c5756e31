package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/legacytokencleaner"
)

// LegacyTokenCleanerOptions configure the legacy service account token
// cleaner (legacy-serviceaccount-token-cleaner-controller).
type LegacyTokenCleanerOptions struct {
	// CleanUpPeriod is kube-controller-manager's
	// --legacy-service-account-token-clean-up-period: how long an
	// auto-generated legacy token must go unused before it is labelled
	// invalid, and then stay invalid before it is deleted. Nil means its
	// default, 365 days; one not positive stops the server at start, as
	// it stops kube-controller-manager.
	CleanUpPeriod *time.Duration
	// SyncInterval is the time between the cleaner's passes, fixed in
	// kube-controller-manager (24h, the default when zero); shorter ones
	// are for tests.
	SyncInterval time.Duration
}

func (o LegacyTokenCleanerOptions) cleanUpPeriod() time.Duration {
	if o.CleanUpPeriod == nil {
		return legacytokencleaner.DefaultCleanUpPeriod
	}
	return *o.CleanUpPeriod
}

// check refuses a period kube-controller-manager refuses, when the
// selection runs the cleaner.
func (o LegacyTokenCleanerOptions) check(sel controllers.ControllerSelection) error {
	if p := o.cleanUpPeriod(); sel.Enabled(legacytokencleaner.Name) && p <= 0 {
		return fmt.Errorf("starting the legacy service account token cleaner: --legacy-service-account-token-clean-up-period=%v is not positive", p)
	}
	return nil
}

// startLegacyTokenCleaner runs kube-controller-manager's
// legacy-serviceaccount-token-cleaner-controller until ctx ends, when the
// selection turns it on: unused auto-generated legacy service account
// tokens are labelled invalid, then deleted. It acts as the
// legacy-service-account-token-cleaner service account (bootstrap RBAC's
// system:controller:legacy-service-account-token-cleaner), through
// admission.
func startLegacyTokenCleaner(ctx context.Context, p *apiParts, caches *controllers.Caches, o LegacyTokenCleanerOptions, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(legacytokencleaner.Name) {
		return nil
	}
	l := log.With("controller", legacytokencleaner.Name)
	client, err := controllers.NewClientset(controllerLoopback(ctx, p.api, legacytokencleaner.User, l))
	if err != nil {
		return err
	}
	c, err := legacytokencleaner.New(legacytokencleaner.Config{Store: p.store, Catalogue: p.cat, Caches: caches, Client: client, Log: l,
		CleanUpPeriod: o.cleanUpPeriod(), SyncInterval: o.SyncInterval})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
