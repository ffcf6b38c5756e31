package admissionsource

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// Backoff between failed lists or watches: doubled from minRetry up to
// maxRetry, back to minRetry once a watch delivered events.
const (
	minRetry = 10 * time.Millisecond
	maxRetry = 2 * time.Second
)

// errRelist ends a watch that cannot be trusted to continue from the list.
var errRelist = errors.New("admissionsource: list again")

// Run keeps the cache in step with storage until ctx ends: it lists at a
// revision R and watches from R. When the watch ends (the watcher fell
// behind, the store failed) it watches again from the last revision
// applied; when that revision is compacted, it lists again.
// Failures are logged to log (nil: not logged) and retried.
func (c *Cache) Run(ctx context.Context, log *slog.Logger) {
	wait, list := minRetry, true
	for ctx.Err() == nil {
		var delivered bool
		var err error
		if list {
			err = c.relist(ctx)
		}
		if err == nil {
			delivered, err = c.watch(ctx)
			list = errors.Is(err, storage.ErrCompacted) || errors.Is(err, errRelist)
		}
		if err != nil && err != errRelist && ctx.Err() == nil && log != nil {
			log.Warn("admission cache: list or watch failed, retrying", "resource", c.res.GroupVersionResource.String(), "err", err)
		}
		if delivered {
			wait = minRetry
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, maxRetry)
	}
}

// watch applies the events after the cache's revision until the watch
// ends; delivered reports whether it applied any.
func (c *Cache) watch(ctx context.Context) (delivered bool, err error) {
	c.mu.RLock()
	from := c.rev
	c.mu.RUnlock()
	w, err := c.store.Watch(ctx, c.prefix, from)
	if err != nil {
		return false, err
	}
	defer w.Stop()
	if from == 0 {
		// A watch from 0 starts "now": what was written since the list
		// would be lost.
		if rev, err := c.store.Revision(ctx); err != nil || rev != 0 {
			return false, errRelist
		}
	}
	for ev := range w.Events() {
		c.applyEvent(ev)
		delivered = true
	}
	return delivered, w.Err()
}

// relist replaces the cache's content with a list at the current revision,
// keeping what Observe applied beyond it, and reusing the decoded object
// of every unchanged key.
func (c *Cache) relist(ctx context.Context) error {
	page, err := c.store.List(ctx, c.prefix, storage.ListOptions{})
	if err != nil {
		return err
	}
	c.relists.Add(1)
	c.replace(page)
	return nil
}

// replace makes a listed page the cache's content, as relist describes.
func (c *Cache) replace(page storage.ListResult) {
	keys, reuse := c.reusable(page.Items)
	next := make(map[string]map[string]entry)
	for i, kv := range page.Items {
		e := reuse[i]
		if e.obj == nil {
			obj, err := layout.Decode(c.res, kv)
			if err != nil {
				continue // as if absent: a lookup must not see an older version
			}
			e = entry{rev: kv.ModRevision, obj: obj}
		}
		putInto(next, keys[i], e)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mergeAheadLocked(next, page.Revision)
	c.objs, c.rev = next, page.Revision
	c.changedLocked("", true)
	c.pruneTombstonesLocked()
	if !c.synced.Load() {
		c.synced.Store(true)
		close(c.syncedC)
	}
}

// mergeAheadLocked carries into next what Observe applied after the list's
// revision rev: newer entries, and tombstones.
func (c *Cache) mergeAheadLocked(next map[string]map[string]entry, rev int64) {
	for ns, byName := range c.objs {
		for name, e := range byName {
			if e.rev > rev {
				putInto(next, objKey{ns, name}, e)
			}
		}
	}
	for k, t := range c.gone {
		if e, ok := next[k.namespace][k.name]; ok && e.rev <= t {
			delete(next[k.namespace], k.name)
		}
	}
}

func putInto(m map[string]map[string]entry, k objKey, e entry) {
	byName := m[k.namespace]
	if byName == nil {
		byName = map[string]entry{}
		m[k.namespace] = byName
	}
	byName[k.name] = e
}

// applyEvent applies one watch event and moves the cache's revision to it.
func (c *Cache) applyEvent(ev storage.Event) {
	k, ok := c.objKeyOf(ev.KV.Key)
	if ok && ev.Type == storage.EventPut {
		c.applyPut(k, ev.KV)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok && ev.Type == storage.EventDelete {
		c.deleteLocked(k, ev.KV.ModRevision)
	}
	c.rev = ev.KV.ModRevision
	c.pruneTombstonesLocked()
}

// pruneTombstonesLocked drops the tombstones the watch has passed: no
// event at or below them can come any more.
func (c *Cache) pruneTombstonesLocked() {
	for k, t := range c.gone {
		if t <= c.rev {
			delete(c.gone, k)
		}
	}
}

// reusable splits the listed keys and finds the entries the cache already
// has at the listed revision (nil obj where it has not).
func (c *Cache) reusable(items []storage.KeyValue) ([]objKey, []entry) {
	keys := make([]objKey, len(items))
	reuse := make([]entry, len(items))
	c.mu.RLock()
	defer c.mu.RUnlock()
	for i, kv := range items {
		keys[i], _ = c.objKeyOf(kv.Key)
		if e, ok := c.objs[keys[i].namespace][keys[i].name]; ok && e.rev == kv.ModRevision {
			reuse[i] = e
		}
	}
	return keys, reuse
}
