package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// graphHandlers are the graph's event methods for one kind. update is nil
// for kinds whose node cannot change (upstream has no update handler for
// them): a changed object is then removed and added again.
type graphHandlers struct {
	add, remove func(runtime.Object)
	update      func(old, obj runtime.Object)
	// typed reports whether an object is of the kind the methods take.
	typed func(runtime.Object) bool
}

// handlers adapts the typed event methods of a kind.
func handlers[T runtime.Object](add func(T), update func(old, obj T), remove func(T)) graphHandlers {
	h := graphHandlers{
		add:    func(o runtime.Object) { add(o.(T)) },
		remove: func(o runtime.Object) { remove(o.(T)) },
		typed:  func(o runtime.Object) bool { _, ok := o.(T); return ok },
	}
	if update != nil {
		h.update = func(old, o runtime.Object) { update(old.(T), o.(T)) }
	}
	return h
}

// kept is an object as last given to the graph, with its revision.
type kept struct {
	obj runtime.Object
	rev int64
}

// graphFeed follows one resource of storage into the graph, as an
// informer: a list, then a watch from the list's revision, and a list again
// (diffed against the objects kept) when the watch ends. Writes of this
// server arrive earlier through written; an event at or below the revision
// already applied to its key is stale and ignored, so the watch and the
// observer may deliver the same write in either order.
type graphFeed struct {
	store storage.Store
	res   *registry.Resource
	h     graphHandlers
	log   *slog.Logger

	mu   sync.Mutex
	objs map[string]kept
	// gone holds, for keys deleted by an event the watch has not passed
	// yet, the revision at or below which events of the key are stale.
	gone map[string]int64
	// rev is the revision the feed has followed storage to.
	rev int64
}

func newGraphFeed(store storage.Store, res *registry.Resource, h graphHandlers, log *slog.Logger) *graphFeed {
	return &graphFeed{store: store, res: res, h: h, log: log, objs: map[string]kept{}, gone: map[string]int64{}}
}

// putLocked gives obj, stored under key at rev, to the graph unless it is
// stale.
func (f *graphFeed) putLocked(key string, obj runtime.Object, rev int64) {
	old, ok := f.objs[key]
	if (ok && rev <= old.rev) || rev <= f.gone[key] || !f.h.typed(obj) {
		return
	}
	f.objs[key] = kept{obj: obj, rev: rev}
	delete(f.gone, key)
	switch {
	case !ok:
		f.h.add(obj)
	case f.h.update != nil:
		f.h.update(old.obj, obj)
	default:
		f.h.remove(old.obj)
		f.h.add(obj)
	}
}

// removeLocked forgets key, deleted by a write after rev, unless the object
// kept is newer.
func (f *graphFeed) removeLocked(key string, rev int64) {
	if rev > f.gone[key] {
		f.gone[key] = rev
	}
	old, ok := f.objs[key]
	if !ok || old.rev > rev {
		return
	}
	delete(f.objs, key)
	f.h.remove(old.obj)
}

// followedLocked records that storage has been followed to rev: no event at
// or below it can arrive from the watch any more.
func (f *graphFeed) followedLocked(rev int64) {
	f.rev = rev
	for key, r := range f.gone {
		if r <= rev {
			delete(f.gone, key)
		}
	}
}

// list reads every object and brings the graph to that state.
func (f *graphFeed) list(ctx context.Context) error {
	rev, err := f.store.Revision(ctx)
	if err != nil {
		return err
	}
	kvs, objs, err := layout.List(ctx, f.store, f.res, rev)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	listed := make(map[string]bool, len(kvs))
	for i, kv := range kvs {
		listed[kv.Key] = true
		f.putLocked(kv.Key, objs[i], kv.ModRevision)
	}
	for key := range f.objs {
		if !listed[key] {
			f.removeLocked(key, rev)
		}
	}
	f.followedLocked(rev)
	return nil
}

// run watches until ctx ends, listing again whenever a watch ends; a
// watch that cannot start for another reason than compaction is retried a
// second later.
func (f *graphFeed) run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := f.watch(ctx); err != nil && !errors.Is(err, storage.ErrCompacted) {
			f.log.Error("watching for the node graph", "resource", f.res.Resource, "err", err)
			pause(ctx, time.Second)
		}
		if ctx.Err() != nil {
			return
		}
		if err := f.list(ctx); err != nil && ctx.Err() == nil {
			f.log.Error("listing for the node graph", "resource", f.res.Resource, "err", err)
			pause(ctx, time.Second)
		}
	}
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// watch applies the events after the revision followed until the watch
// ends (an error, compaction, or ctx); it returns why it could not start.
func (f *graphFeed) watch(ctx context.Context) error {
	f.mu.Lock()
	from := f.rev
	f.mu.Unlock()
	w, err := f.store.Watch(ctx, layout.ResourcePrefix(f.res), from)
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.Events() {
		f.event(ev)
	}
	if err := w.Err(); err != nil && ctx.Err() == nil {
		f.log.Info("node graph watch ended, listing again", "resource", f.res.Resource, "err", err)
	}
	return nil
}

// event applies one watch event.
func (f *graphFeed) event(ev storage.Event) {
	var obj runtime.Object
	if ev.Type == storage.EventPut {
		var err error
		if obj, err = layout.Decode(f.res, ev.KV); err != nil {
			f.log.Error("decoding for the node graph", "key", ev.KV.Key, "err", err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case ev.Type == storage.EventDelete:
		f.removeLocked(ev.KV.Key, ev.KV.ModRevision)
	case obj != nil:
		f.putLocked(ev.KV.Key, obj, ev.KV.ModRevision)
	}
	f.followedLocked(ev.KV.ModRevision)
}

// written applies a write of this server, before it returns: obj stored at
// rev, or deleted after rev.
func (f *graphFeed) written(key string, obj runtime.Object, rev int64, deleted bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if deleted {
		f.removeLocked(key, rev)
		return
	}
	f.putLocked(key, obj, rev)
}
