package apiserver

import (
	"context"
	"errors"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// afterWrite runs after a successful, non-dry-run write of obj, an object of
// res (for a delete, the object deleted): definitions that change what the
// server serves take effect before the write returns, and so do the
// caBundles injected from a Secret.
func (s *Server) afterWrite(ctx context.Context, res *registry.Resource, obj runtime.Object) {
	switch res.GroupVersionResource {
	case registry.CRDResource:
		if err := s.SyncCustomResources(ctx); err != nil {
			s.log.Error("serving custom resources", "err", err)
		}
	case mutatingWebhooksGVR, validatingWebhooksGVR:
		if s.cfg.WebhookConfigs != nil {
			if err := s.cfg.WebhookConfigs.Reload(ctx); err != nil {
				s.log.Error("reloading webhook configurations", "err", err)
			}
		}
		s.webhookConfigWritten(ctx, res, obj)
	case secretsGVR:
		s.secretWritten(ctx, accessor(obj))
	case validatingPoliciesGVR, validatingBindingsGVR, mutatingPoliciesGVR, mutatingBindingsGVR:
		if s.cfg.PolicyConfigs != nil {
			if err := s.cfg.PolicyConfigs.Reload(ctx); err != nil {
				s.log.Error("reloading admission policies", "err", err)
			}
		}
	}
}

// SyncCustomResources serves exactly the custom resources of the stored
// definitions.
func (s *Server) SyncCustomResources(ctx context.Context) error {
	res, _ := s.cat.Lookup(registry.CRDResource)
	_, objs, err := layout.List(ctx, s.store, res, 0)
	if err != nil {
		return err
	}
	custom := map[string][]*registry.Resource{}
	for _, obj := range objs {
		crd := obj.(*apiextensionsv1.CustomResourceDefinition)
		if crd.DeletionTimestamp != nil {
			continue
		}
		custom[crd.Name] = registry.CustomResources(crd)
	}
	s.cat.ReplaceCustom(custom)
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
