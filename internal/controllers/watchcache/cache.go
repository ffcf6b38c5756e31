// Package watchcache holds the caches the controllers
// (internal/controllers/<workload>, internal/nodesim) read: one resource's
// objects as storage has them, decoded once per revision, fed by a watch of
// storage (controllers.Follow), with handlers called on each change. It is
// the shared informer and lister of client-go: one cache of a resource
// serves every controller of a process that reads it (see
// controllers.Caches), each with its own handlers; the objects are shared
// read-only, and a caller copies (DeepCopy) one before changing it. It is
// not a general cache: besides namespace, it has the indexes its readers
// add (AddIndex), as client-go's indexers. A cluster-scoped
// resource's objects are kept under the namespace "".
package watchcache

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/admitd/admitd/pkg/storage"
)

// Handlers are what a cache calls when its objects change: Add for a new
// object, Update for a changed one, Remove for one gone (with its last
// known state). A nil func is not called. They run on the cache's one
// follower goroutine, after the cache has changed, one handler set after
// the other; they must not add handlers to the same cache.
type Handlers[T any] struct {
	Add    func(obj T)
	Update func(old, cur T)
	Remove func(obj T)
}

func (h Handlers[T]) add(obj T) {
	if h.Add != nil {
		h.Add(obj)
	}
}

func (h Handlers[T]) update(old, cur T) {
	if h.Update != nil {
		h.Update(old, cur)
	}
}

func (h Handlers[T]) remove(obj T) {
	if h.Remove != nil {
		h.Remove(obj)
	}
}

// Cache holds one resource's objects as storage has them, decoded, by
// namespace and name: the shared informer of a client-go controller, fed
// by a watch of storage (controllers.Follow) instead of the API.
type Cache[T any] struct {
	prefix  string // the resource's key prefix; keys below it are <namespace>/<name>
	decode  func(kv storage.KeyValue) (T, error)
	onError func(key string, err error)

	// dispatch orders changes and handler calls, and the replay of the
	// contents to handlers added late, so that every handler set sees
	// one sequence of changes.
	dispatch sync.Mutex
	handlers []Handlers[T]
	revision atomic.Int64      // the highest storage revision applied
	mutation *mutationCheck[T] // nil unless DetectMutations

	mu      sync.RWMutex
	items   map[string]map[string]T // namespace → name → object
	indexes map[string]*index[T]    // by name (AddIndex)
	synced  chan struct{}
	once    sync.Once
}

// Synced is closed once the cache has its first listing.
func (c *Cache[T]) Synced() <-chan struct{} { return c.synced }

// New returns the cache of the objects under prefix (a resource's key
// prefix: keys below it are <namespace>/<name>), decoded by decode, with
// the handler set h (more may be added with AddHandlers); onError hears
// of a value that does not decode.
func New[T any](prefix string, decode func(storage.KeyValue) (T, error), h Handlers[T], onError func(key string, err error)) *Cache[T] {
	return &Cache[T]{prefix: prefix, decode: decode, handlers: []Handlers[T]{h}, onError: onError,
		items: map[string]map[string]T{}, synced: make(chan struct{})}
}

// AddHandlers adds a handler set. When the cache has had its first
// listing, the set hears of every object it holds as an Add first (as a
// client-go informer replays its contents to a handler added late), before
// any later change.
func (c *Cache[T]) AddHandlers(h Handlers[T]) {
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	c.handlers = append(c.handlers, h)
	select {
	case <-c.synced:
	default:
		return // the first listing adds every object
	}
	c.mu.RLock()
	var objs []T
	for _, names := range c.items {
		for _, obj := range names {
			objs = append(objs, obj)
		}
	}
	c.mu.RUnlock()
	for _, obj := range objs {
		h.add(obj)
	}
}

// Revision is the highest storage revision of the objects and events the
// cache has applied: a write of that revision or before is in the cache.
func (c *Cache[T]) Revision() int64 { return c.revision.Load() }

func (c *Cache[T]) observe(rev int64) {
	for {
		cur := c.revision.Load()
		if rev <= cur || c.revision.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// Reset replaces the cache's objects with a listing: objects not listed
// are removed, new ones added, the others updated.
func (c *Cache[T]) Reset(kvs []storage.KeyValue) {
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
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
	c.reindexed()
	c.mu.Unlock()
	for _, kv := range kvs {
		c.observe(kv.ModRevision)
	}
	for ns, objs := range old {
		for name, obj := range objs {
			c.mutation.replaced(c.storageKey(ns, name), obj)
			if _, ok := listed[ns][name]; !ok {
				c.each(func(h Handlers[T]) { h.remove(obj) })
			}
		}
	}
	for _, kv := range kvs {
		if ns, name, ok := c.key(kv.Key); ok {
			if obj, ok := listed[ns][name]; ok {
				c.mutation.stored(kv, obj)
			}
		}
	}
	for ns, objs := range listed {
		for name, obj := range objs {
			if prev, ok := old[ns][name]; ok {
				c.each(func(h Handlers[T]) { h.update(prev, obj) })
			} else {
				c.each(func(h Handlers[T]) { h.add(obj) })
			}
		}
	}
	c.once.Do(func() { close(c.synced) })
}

func (c *Cache[T]) each(call func(Handlers[T])) {
	for _, h := range c.handlers {
		call(h)
	}
}

// Event applies one change.
func (c *Cache[T]) Event(ev storage.Event) {
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	ns, name, ok := c.key(ev.KV.Key)
	if !ok {
		c.observe(ev.KV.ModRevision)
		return
	}
	if ev.Type == storage.EventDelete {
		c.mu.Lock()
		prev, had := c.items[ns][name]
		delete(c.items[ns], name)
		if len(c.items[ns]) == 0 {
			delete(c.items, ns)
		}
		if had {
			c.unindexed(objectKey{ns, name}, prev)
		}
		c.mu.Unlock()
		c.observe(ev.KV.ModRevision)
		if had {
			c.mutation.replaced(ev.KV.Key, prev)
			c.each(func(h Handlers[T]) { h.remove(prev) })
		}
		return
	}
	obj, err := c.decode(ev.KV)
	if err != nil {
		c.onError(ev.KV.Key, err)
		c.observe(ev.KV.ModRevision)
		return
	}
	c.mu.Lock()
	prev, had := c.items[ns][name]
	if c.items[ns] == nil {
		c.items[ns] = map[string]T{}
	}
	c.items[ns][name] = obj
	c.indexed(objectKey{ns, name}, prev, had, obj)
	c.mu.Unlock()
	c.observe(ev.KV.ModRevision)
	if had {
		c.mutation.replaced(ev.KV.Key, prev)
	}
	c.mutation.stored(ev.KV, obj)
	if had {
		c.each(func(h Handlers[T]) { h.update(prev, obj) })
	} else {
		c.each(func(h Handlers[T]) { h.add(obj) })
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

// storageKey is the key of the object namespace/name.
func (c *Cache[T]) storageKey(namespace, name string) string {
	if namespace == "" {
		return c.prefix + name
	}
	return c.prefix + namespace + "/" + name
}

// Get returns the object namespace/name. It is shared: callers copy it
// before changing it.
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
