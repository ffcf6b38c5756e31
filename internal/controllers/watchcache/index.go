package watchcache

// objectKey names a cached object.
type objectKey struct{ namespace, name string }

// index finds a cache's objects by keys other than their namespace, as a
// client-go indexer does: keys gives the keys an object is found under.
type index[T any] struct {
	keys  func(T) []string
	items map[string]map[objectKey]T // index key → object
}

func newIndex[T any](keys func(T) []string) *index[T] {
	return &index[T]{keys: keys, items: map[string]map[objectKey]T{}}
}

func (ix *index[T]) add(k objectKey, obj T) {
	for _, key := range ix.keys(obj) {
		objs := ix.items[key]
		if objs == nil {
			objs = map[objectKey]T{}
			ix.items[key] = objs
		}
		objs[k] = obj
	}
}

func (ix *index[T]) remove(k objectKey, obj T) {
	for _, key := range ix.keys(obj) {
		delete(ix.items[key], k)
		if len(ix.items[key]) == 0 {
			delete(ix.items, key)
		}
	}
}

// AddIndex adds the index name, keys giving the keys each object is found
// under by ByIndex: built from the objects cached so far, then kept with
// every change. Adding a name the cache has already does nothing, as
// upstream's AddPodControllerIndexer on a shared informer (controllers
// sharing a cache share its indexes; one name, one keys func).
func (c *Cache[T]) AddIndex(name string, keys func(T) []string) {
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.indexes[name]; ok {
		return
	}
	ix := newIndex(keys)
	for ns, names := range c.items {
		for n, obj := range names {
			ix.add(objectKey{ns, n}, obj)
		}
	}
	if c.indexes == nil {
		c.indexes = map[string]*index[T]{}
	}
	c.indexes[name] = ix
}

// ByIndex returns the objects the index name has under key, in no order.
// The objects are shared, as List's. It panics for an index never added:
// answering "none" would have a controller create what exists.
func (c *Cache[T]) ByIndex(name, key string) []T {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix := c.indexes[name]
	if ix == nil {
		panic("watchcache: no index " + name)
	}
	objs := ix.items[key]
	out := make([]T, 0, len(objs))
	for _, obj := range objs {
		out = append(out, obj)
	}
	return out
}

// indexed records obj (namespace/name) in every index, replacing prev
// when had; c.mu is held for writing.
func (c *Cache[T]) indexed(k objectKey, prev T, had bool, obj T) {
	for _, ix := range c.indexes {
		if had {
			ix.remove(k, prev)
		}
		ix.add(k, obj)
	}
}

// unindexed removes obj (namespace/name) from every index; c.mu is held
// for writing.
func (c *Cache[T]) unindexed(k objectKey, obj T) {
	for _, ix := range c.indexes {
		ix.remove(k, obj)
	}
}

// reindexed rebuilds every index from the cache's objects; c.mu is held
// for writing.
func (c *Cache[T]) reindexed() {
	for name, ix := range c.indexes {
		fresh := newIndex(ix.keys)
		for ns, names := range c.items {
			for n, obj := range names {
				fresh.add(objectKey{ns, n}, obj)
			}
		}
		c.indexes[name] = fresh
	}
}
