package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/pkg/storage"
)

// apiServiceSyncTimeout bounds the first sync of the Local APIServices,
// which start waits for (kube-apiserver is not ready before it either).
const apiServiceSyncTimeout = 30 * time.Second

// startAPIServiceRegistration creates the Local APIServices of everything
// the server serves before returning, then keeps those of custom
// resources until ctx ends; it writes as the API server itself.
func startAPIServiceRegistration(ctx context.Context, p *apiParts, store storage.Store, log *slog.Logger) error {
	c, err := controllers.NewAPIServiceRegistration(store, p.cat, p.api.Loopback(apiserverUser), log.With("controller", "apiservice-registration"))
	if err != nil {
		return err
	}
	first, cancel := context.WithTimeout(ctx, apiServiceSyncTimeout)
	defer cancel()
	if err := c.SyncOnStart(first); err != nil {
		log.Warn("registering the Local APIServices", "err", err)
	}
	go c.Run(ctx)
	return nil
}
