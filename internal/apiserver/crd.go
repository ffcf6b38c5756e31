package apiserver

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// SyncCustomResources serves exactly the custom resources of the stored
// definitions.
func (s *Server) SyncCustomResources(ctx context.Context) error {
	return syncCustomResources(ctx, s.store, s.cat)
}

// CustomResourceSync is the observer that makes a write of a
// CustomResourceDefinition change what the server serves before the write
// returns.
func CustomResourceSync(store storage.Store, cat *registry.Catalogue, log *slog.Logger) WriteObserver {
	return NewCustomResources(store, cat, log).Observer()
}

// CustomResources keeps the catalogue's custom resources those of the
// stored definitions: after every write through this server (Observer)
// and, through a watch of the store, after the writes of other servers
// sharing it (Run).
type CustomResources struct {
	store storage.Store
	cat   *registry.Catalogue
	log   *slog.Logger
	// mu makes each list and replace one step, so that a slower sync of
	// an older list never replaces a newer one.
	mu sync.Mutex
}

// NewCustomResources returns the sync of cat's custom resources.
func NewCustomResources(store storage.Store, cat *registry.Catalogue, log *slog.Logger) *CustomResources {
	return &CustomResources{store: store, cat: cat, log: log}
}

// Observer is the write observer of the definitions.
func (c *CustomResources) Observer() WriteObserver {
	return ObserveResources(func(ctx context.Context, _ WriteEvent) { c.sync(ctx) }, registry.CRDResource.GroupResource())
}

// Run syncs after every change of a definition made through any server,
// until ctx ends.
func (c *CustomResources) Run(ctx context.Context) {
	res, _ := c.cat.Lookup(registry.CRDResource)
	for ctx.Err() == nil {
		if err := c.follow(ctx, layout.ResourcePrefix(res)); err != nil && ctx.Err() == nil {
			c.log.Warn("watching custom resource definitions, listing again", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// follow syncs once, then after each event under prefix, until the watch
// ends.
func (c *CustomResources) follow(ctx context.Context, prefix string) error {
	rev, err := c.store.Revision(ctx)
	if err != nil {
		return err
	}
	c.sync(ctx)
	w, err := c.store.Watch(ctx, prefix, rev)
	if err != nil {
		return err
	}
	defer w.Stop()
	for range w.Events() {
		c.sync(ctx)
	}
	return w.Err()
}

func (c *CustomResources) sync(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := syncCustomResources(ctx, c.store, c.cat); err != nil {
		c.log.Error("serving custom resources", "err", err)
	}
}

func syncCustomResources(ctx context.Context, store storage.Store, cat *registry.Catalogue) error {
	res, _ := cat.Lookup(registry.CRDResource)
	_, objs, err := layout.List(ctx, store, res, 0)
	if err != nil {
		return err
	}
	custom := map[string][]*registry.Resource{}
	for _, obj := range objs {
		crd := obj.(*apiextensionsv1.CustomResourceDefinition)
		if crd.DeletionTimestamp != nil {
			continue
		}
		custom[crd.Name] = cat.CustomResourcesOf(crd)
	}
	cat.ReplaceCustom(custom)
	return nil
}

// deleteCustomObjects removes every stored object of a deleted definition.
func (s *Server) deleteCustomObjects(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	resources := registry.CustomResources(crd)
	if len(resources) == 0 {
		return nil
	}
	page, err := s.store.List(ctx, layout.ResourcePrefix(resources[0]), storage.ListOptions{})
	if err != nil {
		return err
	}
	for _, kv := range page.Items {
		if _, _, err := s.store.Delete(ctx, kv.Key, 0); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
	}
	return nil
}
