package apiserver

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission/webhooks"
	"github.com/admitd/admitd/pkg/storage"
)

var (
	mutatingWebhooksGVR   = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations")
	validatingWebhooksGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")
)

// WebhookConfigs keeps the webhook configurations of storage as an
// immutable snapshot for the webhook plugins. A write through this server
// reloads it before the write returns; a watch picks up writes made by other
// servers sharing the storage.
type WebhookConfigs struct {
	store    storage.Store
	cat      *registry.Catalogue
	mu       sync.Mutex // serialises reloads
	current  atomic.Pointer[webhooks.Snapshot]
	revision int64
}

var _ webhooks.Source = (*WebhookConfigs)(nil)

// NewWebhookConfigs returns an empty cache; call Reload before serving.
func NewWebhookConfigs(store storage.Store, cat *registry.Catalogue) *WebhookConfigs {
	c := &WebhookConfigs{store: store, cat: cat}
	c.current.Store(webhooks.NewSnapshot(nil, nil))
	return c
}

// Current returns the latest snapshot.
func (c *WebhookConfigs) Current() *webhooks.Snapshot { return c.current.Load() }

// Reload reads every configuration and publishes a new snapshot.
func (c *WebhookConfigs) Reload(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	mres, _ := c.cat.Lookup(mutatingWebhooksGVR)
	vres, _ := c.cat.Lookup(validatingWebhooksGVR)
	rev, err := c.store.Revision(ctx)
	if err != nil {
		return err
	}
	var mutating []*admissionregistrationv1.MutatingWebhookConfiguration
	var validating []*admissionregistrationv1.ValidatingWebhookConfiguration
	if err := eachStored(ctx, c.store, mres, rev, func(obj any) {
		mutating = append(mutating, obj.(*admissionregistrationv1.MutatingWebhookConfiguration))
	}); err != nil {
		return err
	}
	if err := eachStored(ctx, c.store, vres, rev, func(obj any) {
		validating = append(validating, obj.(*admissionregistrationv1.ValidatingWebhookConfiguration))
	}); err != nil {
		return err
	}
	c.current.Store(webhooks.NewSnapshot(mutating, validating))
	c.revision = rev
	return nil
}

// eachStored decodes every stored object of res at revision rev.
func eachStored(ctx context.Context, store storage.Store, res *registry.Resource, rev int64, fn func(obj any)) error {
	page, err := store.List(ctx, resourcePrefix(res), storage.ListOptions{Revision: rev})
	if err != nil {
		return err
	}
	for _, kv := range page.Items {
		obj, err := decodeFromStorage(res, kv)
		if err != nil {
			return err
		}
		fn(obj)
	}
	return nil
}

// Run reloads on every change made through any server until ctx ends.
func (c *WebhookConfigs) Run(ctx context.Context) {
	for ctx.Err() == nil {
		c.watch(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (c *WebhookConfigs) watch(ctx context.Context) {
	c.mu.Lock()
	from := c.revision
	c.mu.Unlock()
	w, err := c.store.Watch(ctx, "/registry/admissionregistration.k8s.io/", from)
	if err != nil {
		_ = c.Reload(ctx)
		return
	}
	defer w.Stop()
	for ev := range w.Events() {
		if isWebhookConfigKey(ev.KV.Key) {
			_ = c.Reload(ctx)
		}
	}
}

func isWebhookConfigKey(key string) bool {
	rest := strings.TrimPrefix(key, "/registry/admissionregistration.k8s.io/")
	return strings.HasPrefix(rest, "mutatingwebhookconfigurations/") || strings.HasPrefix(rest, "validatingwebhookconfigurations/")
}
