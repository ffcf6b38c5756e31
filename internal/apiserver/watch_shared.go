package apiserver

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// sharedEventsKept is how many recent events stay shared: enough for every
// watcher of a burst of writes to find the event its peers decoded.
const sharedEventsKept = 4096

// sharedEventShards spreads the shared events over locks of their own, by
// revision: every watcher of a write looks its event up, at once.
const sharedEventShards = 16

// sharedEvents hold, for the most recent storage events, the objects
// decoded from them and the frames encoded from those, so that a write
// watched by many clients is decoded once and encoded once per output
// form (as upstream's watch cache and its caching objects do), however
// many watchers send it.
type sharedEvents struct {
	shards [sharedEventShards]sharedEventShard
}

// sharedEventShard holds the shared events of the revisions that fall to
// it. A revision names one key's change in a store; the few events of one
// revision (one per resource it is served as) are chained.
type sharedEventShard struct {
	mu   sync.Mutex
	m    map[int64]*sharedEvent
	ring [sharedEventsKept / sharedEventShards]int64 // revisions, oldest at next
	next int
}

// sharedEvent is one storage event as served at one resource version.
// Its objects are shared by every watcher: nobody may change them.
type sharedEvent struct {
	gvr   schema.GroupVersionResource
	key   string
	other *sharedEvent // the next of the same revision (another resource)

	decodeOnce sync.Once
	cur, prev  runtime.Object
	err        error

	// first is the first frame made, found without the lock: most
	// watchers ask for the same one.
	first  atomic.Pointer[keyedFrame]
	mu     sync.Mutex
	frames map[frameKey]*sharedFrame
}

// frameKey names one encoding of an event.
type frameKey struct {
	typ  string
	prev bool
	out  negotiated
}

type keyedFrame struct {
	key frameKey
	f   *sharedFrame
}

type sharedFrame struct {
	once  sync.Once
	bytes []byte
	err   error
}

// get returns the shared event of ev at res, creating it (and forgetting
// the oldest revision of its shard) when it is new.
func (s *sharedEvents) get(res *registry.Resource, ev storage.Event) *sharedEvent {
	rev := ev.KV.ModRevision
	sh := &s.shards[uint64(rev)%sharedEventShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	head := sh.m[rev]
	for se := head; se != nil; se = se.other {
		if se.gvr == res.GroupVersionResource && se.key == ev.KV.Key {
			return se
		}
	}
	if sh.m == nil {
		sh.m = make(map[int64]*sharedEvent, len(sh.ring))
	}
	if head == nil {
		delete(sh.m, sh.ring[sh.next])
		sh.ring[sh.next] = rev
		sh.next = (sh.next + 1) % len(sh.ring)
	}
	se := &sharedEvent{gvr: res.GroupVersionResource, key: ev.KV.Key, other: head}
	sh.m[rev] = se
	return se
}

// decoded decodes the event's object and previous object once. The
// previous object carries the event's revision: it is sent only as a
// DELETED event (the object deleted, or the object as it was when it last
// matched a watch's selector), which upstream's watch cache gives the
// event's revision.
func (se *sharedEvent) decoded(ctx context.Context, res *registry.Resource, ev storage.Event) (cur, prev runtime.Object, err error) {
	se.decodeOnce.Do(func() {
		// not the first watcher's context: its end must not fail the others
		se.cur, se.prev, se.err = decodeEvent(context.WithoutCancel(ctx), res, ev)
		if se.err == nil && se.prev != nil {
			accessor(se.prev).SetResourceVersion(strconv.FormatInt(ev.KV.ModRevision, 10))
		}
	})
	return se.cur, se.prev, se.err
}

// frame returns the encoding named k, made once by encode.
func (se *sharedEvent) frame(k frameKey, encode func() ([]byte, error)) ([]byte, error) {
	f := se.frameNamed(k)
	f.once.Do(func() { f.bytes, f.err = encode() })
	return f.bytes, f.err
}

// frameNamed returns the frame named k, new if it is the first asked for.
func (se *sharedEvent) frameNamed(k frameKey) *sharedFrame {
	if kf := se.first.Load(); kf != nil && kf.key == k {
		return kf.f
	}
	se.mu.Lock()
	defer se.mu.Unlock()
	if se.frames == nil {
		se.frames = map[frameKey]*sharedFrame{}
	}
	f := se.frames[k]
	if f == nil {
		f = &sharedFrame{}
		se.frames[k] = f
		se.first.CompareAndSwap(nil, &keyedFrame{key: k, f: f})
	}
	return f
}
