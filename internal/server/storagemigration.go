package server

import (
	"context"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/storageversionmigrator"
	"github.com/admitd/admitd/pkg/storage"
)

// startStorageVersionMigrator runs kube-controller-manager's
// storage-version-migrator-controller until ctx ends, when the
// --controllers selection enables it (as kube-controller-manager 1.37's,
// on by default); it writes as its service account.
func startStorageVersionMigrator(ctx context.Context, p *apiParts, store storage.Store, o Options, sel controllers.ControllerSelection) error {
	if !sel.Enabled(controllers.StorageVersionMigratorControllerName) {
		return nil
	}
	client, err := controllers.NewClient(controllerLoopback(ctx, p.api, storageversionmigrator.User, o.Logger))
	if err != nil {
		return err
	}
	go storageversionmigrator.New(store, p.cat, client, o.Logger.With("controller", storageversionmigrator.Name)).Run(ctx)
	return nil
}
