package apiserver

import (
	"context"
	"errors"
	"log/slog"

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
	return ObserveResources(func(ctx context.Context, _ WriteEvent) {
		if err := syncCustomResources(ctx, store, cat); err != nil {
			log.Error("serving custom resources", "err", err)
		}
	}, registry.CRDResource.GroupResource())
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
