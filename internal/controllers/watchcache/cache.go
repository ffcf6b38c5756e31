// Package watchcache holds the caches the workload controllers
// (internal/controllers/<workload>) read: one resource's objects as
// storage has them, decoded, fed by a watch of storage
// (controllers.Follow), with handlers called on each change. It is the
// informer and lister of a client-go controller, without the API round
// trip; it is not a general cache (no indexes but namespace). A
// cluster-scoped resource's objects are kept under the namespace "".
package watchcache

import (
	"strings"
	"sync"

	"github.com/admitd/admitd/pkg/storage"
)

// Handlers are what a cache calls when its objects change: Add for a new
// object, Update for a changed one, Remove for one gone (with its last
// known state). They run on the cache's one follower goroutine, after the
// cache has changed.
type Handlers[T any] struct {
	Add    func(obj T)
	Update func(old, cur T)
	Remove func(obj T)
}

// Cache holds one resource's objects as storage has them, decoded, by
// namespace and name: the informer of a client-go controller, fed by a
// watch of storage (controllers.Follow) instead of the API.
type Cache[T any] struct {
	prefix   string // the resource's key prefix; keys below it are <namespace>/<name>
	decode   func(kv storage.KeyValue) (T, error)
	handlers Handlers[T]
	onError  func(key string, err error)

	mu     sync.RWMutex
	items  map[string]map[string]T // namespace → name → object
	synced chan struct{}
	once   sync.Once
}

// Synced is closed once the cache has its first listing.
func (c *Cache[T]) Synced() <-chan struct{} { return c.synced }

// New returns the cache of the objects under prefix (a resource's key
// prefix: keys below it are <namespace>/<name>), decoded by decode;
// onError hears of a value that does not decode.
func New[T any](prefix string, decode func(storage.KeyValue) (T, error), h Handlers[T], onError func(key string, err error)) *Cache[T] {
	return &Cache[T]{prefix: prefix, decode: decode, handlers: h, onError: onError,
		items: map[string]map[string]T{}, synced: make(chan struct{})}
}

// Reset replaces the cache's objects with a listing: objects not listed
// are removed, new ones added, the others updated.
func (c *Cache[T]) Reset(kvs []storage.KeyValue) {
	listed := map[string]map[string]T{}
	for _, kv := range kvs {
		ns, name, ok := c.key(kv.Key)
		if !ok {
			continue
		}
		obj, err := c.decode(kv)
		if err != nil {
			c.onError(kv.Key, err)
			continue
		}
		if listed[ns] == nil {
			listed[ns] = map[string]T{}
		}
		listed[ns][name] = obj
	}
	c.mu.Lock()
	old := c.items
	c.items = listed
	c.mu.Unlock()
	for ns, objs := range old {
		for name, obj := range objs {
			if _, ok := listed[ns][name]; !ok {
				c.handlers.Remove(obj)
			}
		}
	}
	for ns, objs := range listed {
		for name, obj := range objs {
			if prev, ok := old[ns][name]; ok {
				c.handlers.Update(prev, obj)
			} else {
				c.handlers.Add(obj)
			}
		}
	}
	c.once.Do(func() { close(c.synced) })
}

// Event applies one change.
func (c *Cache[T]) Event(ev storage.Event) {
	ns, name, ok := c.key(ev.KV.Key)
	if !ok {
		return
	}
	if ev.Type == storage.EventDelete {
		c.mu.Lock()
		prev, had := c.items[ns][name]
		delete(c.items[ns], name)
		if len(c.items[ns]) == 0 {
			delete(c.items, ns)
		}
		c.mu.Unlock()
		if had {
			c.handlers.Remove(prev)
		}
		return
	}
	obj, err := c.decode(ev.KV)
	if err != nil {
		c.onError(ev.KV.Key, err)
		return
	}
	c.mu.Lock()
	prev, had := c.items[ns][name]
	if c.items[ns] == nil {
		c.items[ns] = map[string]T{}
	}
	c.items[ns][name] = obj
	c.mu.Unlock()
	if had {
		c.handlers.Update(prev, obj)
	} else {
		c.handlers.Add(obj)
	}
}

// key splits a storage key under the prefix into namespace and name.
func (c *Cache[T]) key(storageKey string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(storageKey, c.prefix)
	if !found {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, "/")
	if !ok {
		// a cluster-scoped object: its key is the prefix and its name
		return "", rest, rest != ""
	}
	return namespace, name, !strings.Contains(name, "/")
}

// Get returns the object namespace/name.
func (c *Cache[T]) Get(namespace, name string) (T, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	obj, ok := c.items[namespace][name]
	return obj, ok
}

// ListAll returns the objects of every namespace (and the cluster-scoped
// ones) for which keep is true. The objects are shared, as List's.
func (c *Cache[T]) ListAll(keep func(T) bool) []T {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []T
	for _, objs := range c.items {
		for _, obj := range objs {
			if keep(obj) {
				out = append(out, obj)
			}
		}
	}
	return out
}

// List returns the objects of namespace for which keep is true. The
// objects are shared: callers copy before changing one.
func (c *Cache[T]) List(namespace string, keep func(T) bool) []T {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []T
	for _, obj := range c.items[namespace] {
		if keep(obj) {
			out = append(out, obj)
		}
	}
	return out
}
