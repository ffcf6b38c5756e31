package admissionsource

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
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

	mu       sync.Mutex // serialises reloads
	current  atomic.Pointer[T]
	revision int64
	// decoded are the objects of the last reload by key, with the
	// revision each was decoded at: a reload decodes only what changed
	// since (a write of one RBAC object no longer decodes the hundred
	// bootstrap roles again). Guarded by mu.
	decoded map[string]decodedObject
}

// decodedObject is one stored object as the last reload decoded it.
type decodedObject struct {
	rev int64
	obj runtime.Object
}

// NewConfigCache returns a cache of resources whose snapshot build makes
// from the stored objects (build(nil) until the first Reload). build runs
// under the cache's lock, one call at a time.
func NewConfigCache[T any](store storage.Store, cat *registry.Catalogue, resources []schema.GroupVersionResource, build func([]runtime.Object) *T) *ConfigCache[T] {
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
	decoded := make(map[string]decodedObject, len(c.decoded))
	for _, gvr := range c.resources {
		res, ok := c.cat.Lookup(gvr)
		if !ok {
			continue
		}
		stored, err := c.listDecoded(ctx, res, rev, decoded)
		if err != nil {
			return err
		}
		objs = append(objs, stored...)
	}
	snap := c.build(objs)
	c.current.Store(snap)
	c.revision, c.decoded = rev, decoded
	return nil
}

// listDecoded lists res's stored objects at rev, in storage order, taking
// each unchanged one from the last reload and decoding the others; every
// object listed is added to decoded. c.mu is held.
func (c *ConfigCache[T]) listDecoded(ctx context.Context, res *registry.Resource, rev int64, decoded map[string]decodedObject) ([]runtime.Object, error) {
	page, err := c.store.List(ctx, layout.ResourcePrefix(res), storage.ListOptions{Revision: rev})
	if err != nil {
		return nil, err
	}
	objs := make([]runtime.Object, len(page.Items))
	var changed []storage.KeyValue
	var at []int
	for i, kv := range page.Items {
		if d, ok := c.decoded[kv.Key]; ok && d.rev == kv.ModRevision {
			objs[i] = d.obj
			continue
		}
		changed, at = append(changed, kv), append(at, i)
	}
	fresh, err := layout.DecodeAll(ctx, res, changed)
	if err != nil {
		return nil, err
	}
	for j, obj := range fresh {
		objs[at[j]] = obj
	}
	for i, kv := range page.Items {
		decoded[kv.Key] = decodedObject{rev: kv.ModRevision, obj: objs[i]}
	}
	return objs, nil
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
	prefixes := c.keyPrefixes()
	// Only the writes under the cached resources' common prefix reach this
	// watcher (all of admissionregistration.k8s.io for the built-in caches).
	w, err := c.store.Watch(ctx, commonPrefix(prefixes), from)
	if err != nil {
		_ = c.Reload(ctx)
		return
	}
	defer w.Stop()
	for ev := range w.Events() {
		if hasAnyPrefix(ev.KV.Key, prefixes) {
			_ = c.Reload(ctx)
		}
	}
}

// keyPrefixes are the storage key prefixes of the cached resources.
func (c *ConfigCache[T]) keyPrefixes() []string {
	var out []string
	for _, gvr := range c.resources {
		if res, ok := c.cat.Lookup(gvr); ok {
			out = append(out, layout.ResourcePrefix(res))
		}
	}
	return out
}

func hasAnyPrefix(key string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// commonPrefix is the longest prefix of every key prefix, cut back to a
// whole path segment; the layout root when there are none.
func commonPrefix(prefixes []string) string {
	if len(prefixes) == 0 {
		return layout.Root
	}
	common := prefixes[0]
	for _, p := range prefixes[1:] {
		for !strings.HasPrefix(p, common) {
			common = common[:len(common)-1]
		}
	}
	return common[:strings.LastIndex(common, "/")+1]
}
