package admissionsource

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// Cache is a watch-fed copy of the stored objects of one resource, decoded
// once per change in the version the cache was made for. Until its first
// list (Synced) it reads storage directly, so it is correct from the
// start; after it, Get and List are map reads. The objects it returns are
// shared and must not be modified.
//
// Ordering: every change is applied at its storage revision. The watch
// delivers changes in revision order; Observe applies a write made on this
// instance before the watch has delivered it (read-your-writes) and the
// watch's copy of it is then skipped. A put never replaces a newer entry
// and a delete leaves a tombstone until the watch has passed it, so an
// early Observe is never undone by an older watch event.
type Cache struct {
	store  storage.Store
	res    *registry.Resource
	prefix string

	mu   sync.RWMutex
	objs map[string]map[string]entry // namespace ("" if cluster-scoped) → name → entry
	gone map[objKey]int64            // tombstones: puts at or below the revision are stale
	rev  int64                       // every change up to rev is applied
	// synced is set, and syncedC closed, by the first list: lookups read
	// the flag (a channel receive costs more on every request).
	synced  atomic.Bool
	syncedC chan struct{}

	relists atomic.Int64 // lists done, for tests and metrics

	// sorted holds, per namespace listed since its last change, its
	// objects by name: a list is then a copy, not a sort. Filled by
	// readers (under mu's read lock and sortedMu), dropped by writers.
	sortedMu sync.Mutex
	sorted   map[string][]runtime.Object
}

type entry struct {
	rev int64
	obj runtime.Object
}

type objKey struct{ namespace, name string }

// NewCache returns an unstarted cache of res's objects in store: it reads
// storage directly until Run has listed them.
func NewCache(store storage.Store, res *registry.Resource) *Cache {
	return &Cache{store: store, res: res, prefix: layout.ResourcePrefix(res),
		objs: map[string]map[string]entry{}, gone: map[objKey]int64{}, syncedC: make(chan struct{})}
}

// Resource is the resource cached.
func (c *Cache) Resource() *registry.Resource { return c.res }

// Synced reports whether the first list is done; before it, lookups read
// storage.
func (c *Cache) Synced() bool { return c.synced.Load() }

// WaitSynced waits for the first list, or for ctx to end.
func (c *Cache) WaitSynced(ctx context.Context) error {
	select {
	case <-c.syncedC:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Get returns the object, or a NotFound StatusError.
func (c *Cache) Get(ctx context.Context, namespace, name string) (runtime.Object, error) {
	if !c.Synced() {
		return c.getStored(ctx, namespace, name)
	}
	c.mu.RLock()
	e, ok := c.objs[namespace][name]
	c.mu.RUnlock()
	if !ok {
		return nil, apierrors.NewNotFound(c.res.GroupResource(), name)
	}
	return e.obj, nil
}

// List returns the objects of namespace ("" for all) that sel selects (nil
// selects all), by namespace then name.
func (c *Cache) List(ctx context.Context, namespace string, sel labels.Selector) ([]runtime.Object, error) {
	var objs []runtime.Object
	if !c.Synced() {
		var err error
		if objs, err = c.listStored(ctx, namespace); err != nil {
			return nil, err
		}
	} else {
		objs = c.listCached(namespace)
	}
	if sel == nil || sel.Empty() {
		return objs, nil
	}
	out := objs[:0]
	for _, obj := range objs {
		if m, err := meta.Accessor(obj); err == nil && sel.Matches(labels.Set(m.GetLabels())) {
			out = append(out, obj)
		}
	}
	return out, nil
}

// ListShared is List without the copy, for readers that only read:
// once the cache is synced, a list of everything in a namespace (or of a
// cluster-scoped resource) is the cache's own slice, which the caller must
// not modify (admission.ObjectCache's contract).
func (c *Cache) ListShared(ctx context.Context, namespace string, sel labels.Selector) ([]runtime.Object, error) {
	if (sel == nil || sel.Empty()) && c.Synced() && (namespace != "" || !c.res.Namespaced) {
		c.mu.RLock()
		defer c.mu.RUnlock()
		return c.sortedLocked(namespace), nil
	}
	return c.List(ctx, namespace, sel)
}

func (c *Cache) listCached(namespace string) []runtime.Object {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if namespace != "" {
		// One namespace: its names only, not a walk of every namespace.
		return slices.Clone(c.sortedLocked(namespace))
	}
	namespaces := make([]string, 0, len(c.objs))
	for ns := range c.objs {
		namespaces = append(namespaces, ns)
	}
	slices.Sort(namespaces)
	var out []runtime.Object
	for _, ns := range namespaces {
		out = append(out, c.sortedLocked(ns)...)
	}
	return out
}

// sortedLocked returns the objects of namespace by name, sorted once per
// change of the namespace; c.mu is held (read or write). The slice is
// shared: the caller copies it.
func (c *Cache) sortedLocked(namespace string) []runtime.Object {
	c.sortedMu.Lock()
	defer c.sortedMu.Unlock()
	if objs, ok := c.sorted[namespace]; ok {
		return objs
	}
	objs := sortedObjects(c.objs[namespace])
	if c.sorted == nil {
		c.sorted = map[string][]runtime.Object{}
	}
	c.sorted[namespace] = objs
	return objs
}

// changedLocked drops the sorted list of namespace, or of every namespace
// when all is true; c.mu is held for writing.
func (c *Cache) changedLocked(namespace string, all bool) {
	c.sortedMu.Lock()
	defer c.sortedMu.Unlock()
	if all {
		c.sorted = nil
		return
	}
	delete(c.sorted, namespace)
}

// sortedObjects returns the objects of one namespace by name; nil when it
// has none.
func sortedObjects(byName map[string]entry) []runtime.Object {
	if len(byName) == 0 {
		return nil
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]runtime.Object, len(names))
	for i, name := range names {
		out[i] = byName[name].obj
	}
	return out
}

func (c *Cache) getStored(ctx context.Context, namespace, name string) (runtime.Object, error) {
	kv, err := c.store.Get(ctx, layout.Key(c.res, namespace, name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, apierrors.NewNotFound(c.res.GroupResource(), name)
	}
	if err != nil {
		return nil, err
	}
	return layout.Decode(c.res, kv)
}

func (c *Cache) listStored(ctx context.Context, namespace string) ([]runtime.Object, error) {
	page, err := c.store.List(ctx, layout.ListPrefix(c.res, namespace), storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]runtime.Object, 0, len(page.Items))
	for _, kv := range page.Items {
		obj, err := layout.Decode(c.res, kv)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// Observe applies a write made through this instance, before the watch
// delivers it. obj is what was stored (for a delete, the object deleted),
// with its resourceVersion; version is the API version it is in. An object
// in another version than the cache's is read again from storage. A write
// older than what the cache has is ignored.
func (c *Cache) Observe(ctx context.Context, version string, deleted bool, obj runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	rev, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	k := objKey{m.GetNamespace(), m.GetName()}
	if !c.res.Namespaced {
		k.namespace = ""
	}
	if deleted {
		// A delete carries the revision of the deleted object (or of the
		// delete): every version up to it is gone.
		c.mu.Lock()
		c.deleteLocked(k, rev)
		c.mu.Unlock()
		return
	}
	if version != c.res.Version {
		c.refresh(ctx, k, rev)
		return
	}
	c.mu.Lock()
	if rev > c.rev && !c.staleLocked(k, rev) {
		c.putLocked(k, rev, obj.DeepCopyObject())
	}
	c.mu.Unlock()
}

// refresh reads one object again after a write at rev in another version;
// when it is gone, every version up to rev is.
func (c *Cache) refresh(ctx context.Context, k objKey, rev int64) {
	kv, err := c.store.Get(ctx, layout.Key(c.res, k.namespace, k.name))
	if errors.Is(err, storage.ErrNotFound) {
		c.mu.Lock()
		c.deleteLocked(k, rev)
		c.mu.Unlock()
		return
	}
	if err != nil {
		return
	}
	c.applyPut(k, kv)
}

// applyPut decodes and records kv unless the cache already has it or a
// later state of its key.
func (c *Cache) applyPut(k objKey, kv storage.KeyValue) {
	c.mu.RLock()
	stale := c.staleLocked(k, kv.ModRevision)
	c.mu.RUnlock()
	if stale {
		return
	}
	obj, err := layout.Decode(c.res, kv)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.staleLocked(k, kv.ModRevision):
	case err != nil:
		c.deleteLocked(k, kv.ModRevision) // as if absent, never an older version
	default:
		c.putLocked(k, kv.ModRevision, obj)
	}
}

// staleLocked reports whether a put of k at rev is older than what the
// cache knows of k.
func (c *Cache) staleLocked(k objKey, rev int64) bool {
	if e, ok := c.objs[k.namespace][k.name]; ok && e.rev >= rev {
		return true
	}
	if t, ok := c.gone[k]; ok && t >= rev {
		return true
	}
	return false
}

func (c *Cache) putLocked(k objKey, rev int64, obj runtime.Object) {
	byName := c.objs[k.namespace]
	if byName == nil {
		byName = map[string]entry{}
		c.objs[k.namespace] = byName
	}
	byName[k.name] = entry{rev: rev, obj: obj}
	c.changedLocked(k.namespace, false)
}

// deleteLocked removes k unless its entry is newer than rev, and keeps a
// tombstone until the watch has passed rev. The tombstone is kept even
// when rev is not beyond the cache's revision: a list in progress, taken
// before the delete, may still bring back the deleted version.
func (c *Cache) deleteLocked(k objKey, rev int64) {
	if e, ok := c.objs[k.namespace][k.name]; ok {
		if e.rev > rev {
			return
		}
		delete(c.objs[k.namespace], k.name)
		if len(c.objs[k.namespace]) == 0 {
			delete(c.objs, k.namespace)
		}
		c.changedLocked(k.namespace, false)
	}
	if rev > c.gone[k] {
		c.gone[k] = rev
	}
}

// objKeyOf splits a storage key of the cached resource.
func (c *Cache) objKeyOf(key string) (objKey, bool) {
	rest, ok := strings.CutPrefix(key, c.prefix)
	if !ok {
		return objKey{}, false
	}
	if !c.res.Namespaced {
		return objKey{name: rest}, !strings.Contains(rest, "/")
	}
	ns, name, ok := strings.Cut(rest, "/")
	return objKey{ns, name}, ok && !strings.Contains(name, "/")
}
