package bolt

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/admitd/admitd/pkg/storage"
)

// overlay holds the changes acknowledged since the last checkpoint: durable
// in the write-ahead log, not yet in the bbolt file. Reads consult it on top
// of the file. Only the writer goroutine adds and drops changes. It keeps
// private copies of the values: what it hands out is copied again.
type overlay struct {
	mu sync.RWMutex
	// rev is the store's current revision, advanced under mu together with
	// the changes, so that no reader sees a change of a revision the store
	// does not report yet.
	rev *atomic.Int64
	// base is the revision of the bbolt file after the last checkpoint:
	// events[i] is the change of revision base+1+i.
	base   int64
	events []storage.Event
	latest map[string]int64 // key -> the revision of its last change
	bytes  int
}

func newOverlay(rev *atomic.Int64) *overlay {
	return &overlay{rev: rev, base: rev.Load(), latest: make(map[string]int64)}
}

// add appends the changes of the next revisions and advances the revision.
func (o *overlay) add(events []storage.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, ev := range events {
		o.latest[ev.KV.Key] = ev.KV.ModRevision
		o.events = append(o.events, cloneEvent(ev))
		o.bytes += len(ev.KV.Key) + len(ev.KV.Value)
	}
	o.rev.Store(events[len(events)-1].KV.ModRevision)
}

func cloneEvent(ev storage.Event) storage.Event {
	ev.KV.Value = bytes.Clone(ev.KV.Value)
	if ev.PrevKV != nil {
		prev := *ev.PrevKV
		prev.Value = bytes.Clone(prev.Value)
		ev.PrevKV = &prev
	}
	return ev
}

// pending returns the changes not yet checkpointed. Writer only: the slice
// is not copied.
func (o *overlay) pending() []storage.Event {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.events
}

// size is the number of pending changes and their key and value bytes.
func (o *overlay) size() (events, bytes int) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return len(o.events), o.bytes
}

// checkpointed drops the changes up to revision rev once the bbolt file
// holds them; those made since the checkpoint began stay.
func (o *overlay) checkpointed(rev int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	kept := o.events[rev-o.base:]
	o.base = rev
	o.events = nil
	o.bytes = 0
	if len(kept) > 0 {
		o.events = slices.Clone(kept) // not the dropped ones' array
	}
	for _, ev := range o.events {
		o.bytes += len(ev.KV.Key) + len(ev.KV.Value)
	}
	for key, last := range o.latest {
		if last <= rev {
			delete(o.latest, key)
		}
	}
}

// get returns the latest pending change of key: found reports whether
// there is one, deleted whether it removed the key.
func (o *overlay) get(key string) (kv storage.KeyValue, deleted, found bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	last, ok := o.latest[key]
	if !ok {
		return storage.KeyValue{}, false, false
	}
	ev := o.events[last-o.base-1]
	if ev.Type == storage.EventDelete {
		return storage.KeyValue{}, true, true
	}
	kv = ev.KV
	kv.Value = bytes.Clone(kv.Value)
	return kv, false, true
}

// changes returns, for every key under prefix changed in (after, upTo], its
// value at upTo (nil if deleted). ok is false when the overlay no longer
// starts at or before after: a checkpoint has moved those changes into the
// file since the caller's read transaction began.
func (o *overlay) changes(prefix string, after, upTo int64) (map[string]*storage.KeyValue, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.base > after || upTo-o.base > int64(len(o.events)) {
		return nil, false
	}
	out := make(map[string]*storage.KeyValue)
	for _, ev := range o.events[after-o.base : upTo-o.base] {
		if !strings.HasPrefix(ev.KV.Key, prefix) {
			continue
		}
		if ev.Type == storage.EventDelete {
			out[ev.KV.Key] = nil
			continue
		}
		kv := ev.KV
		kv.Value = bytes.Clone(kv.Value)
		out[ev.KV.Key] = &kv
	}
	return out, true
}

// since returns the pending changes under prefix of revisions from..upTo.
// ok is false when from is at or before the overlay's base: those changes
// are in the file.
func (o *overlay) since(prefix string, from, upTo int64) ([]storage.Event, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if from <= o.base || upTo-o.base > int64(len(o.events)) {
		return nil, false
	}
	var out []storage.Event
	for _, ev := range o.events[from-o.base-1 : upTo-o.base] {
		if strings.HasPrefix(ev.KV.Key, prefix) {
			out = append(out, cloneEvent(ev))
		}
	}
	return out, true
}

// checkpointedRev is the revision the bbolt file holds.
func (o *overlay) checkpointedRev() int64 {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.base
}
