package apiserver

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// ConfigCache keeps the stored objects of a few resources (admission
// configuration: webhook configurations, policies, bindings) as an
// immutable snapshot of type T that requests read without locks. A write
// through this server reloads it before the write returns; a watch picks up
// writes made by other servers sharing the storage.
type ConfigCache[T any] struct {
	store     storage.Store
	cat       *registry.Catalogue
	resources []schema.GroupVersionResource
	build     func(objs []runtime.Object) *T
	// onReload, when set, sees every new snapshot.
	onReload func(*T)

	mu       sync.Mutex // serialises reloads
	current  atomic.Pointer[T]
	revision int64
}

func newConfigCache[T any](store storage.Store, cat *registry.Catalogue, resources []schema.GroupVersionResource, build func([]runtime.Object) *T) *ConfigCache[T] {
	c := &ConfigCache[T]{store: store, cat: cat, resources: resources, build: build}
	c.current.Store(build(nil))
	return c
}

// Current returns the latest snapshot.
func (c *ConfigCache[T]) Current() *T { return c.current.Load() }

// Handles reports whether writes of gvr change the snapshot.
func (c *ConfigCache[T]) Handles(gvr schema.GroupVersionResource) bool {
	for _, r := range c.resources {
		if r == gvr {
			return true
		}
	}
	return false
}

// Reload reads every object of the cache's resources, at one revision, and
// publishes a new snapshot.
func (c *ConfigCache[T]) Reload(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	rev, err := c.store.Revision(ctx)
	if err != nil {
		return err
	}
	var objs []runtime.Object
	for _, gvr := range c.resources {
		res, ok := c.cat.Lookup(gvr)
		if !ok {
			continue
		}
		page, err := c.store.List(ctx, resourcePrefix(res), storage.ListOptions{Revision: rev})
		if err != nil {
			return err
		}
		for _, kv := range page.Items {
			obj, err := decodeFromStorage(res, kv)
			if err != nil {
				return err
			}
			objs = append(objs, obj)
		}
	}
	snap := c.build(objs)
	c.current.Store(snap)
	c.revision = rev
	if c.onReload != nil {
		c.onReload(snap)
	}
	return nil
}

// Run reloads on every change made through any server until ctx ends.
func (c *ConfigCache[T]) Run(ctx context.Context) {
	for ctx.Err() == nil {
		c.watch(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (c *ConfigCache[T]) watch(ctx context.Context) {
	c.mu.Lock()
	from := c.revision
	c.mu.Unlock()
	w, err := c.store.Watch(ctx, "/registry/", from)
	if err != nil {
		_ = c.Reload(ctx)
		return
	}
	defer w.Stop()
	for ev := range w.Events() {
		if c.isCachedKey(ev.KV.Key) {
			_ = c.Reload(ctx)
		}
	}
}

func (c *ConfigCache[T]) isCachedKey(key string) bool {
	for _, gvr := range c.resources {
		if res, ok := c.cat.Lookup(gvr); ok && strings.HasPrefix(key, resourcePrefix(res)) {
			return true
		}
	}
	return false
}
