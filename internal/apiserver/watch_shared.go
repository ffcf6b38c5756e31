package apiserver

import (
	"context"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// sharedEventsKept is how many recent events stay shared: enough for every
// watcher of a burst of writes to find the event its peers decoded.
const sharedEventsKept = 4096

// sharedEvents hold, for the most recent storage events, the objects
// decoded from them and the frames encoded from those, so that a write
// watched by many clients is decoded once and encoded once per output
// form (as upstream's watch cache and its caching objects do), however
// many watchers send it.
type sharedEvents struct {
	mu   sync.Mutex
	m    map[sharedEventKey]*sharedEvent
	ring [sharedEventsKept]sharedEventKey
	next int
}

type sharedEventKey struct {
	gvr schema.GroupVersionResource
	key string
	rev int64
}

// sharedEvent is one storage event as served at one resource version.
// Its objects are shared by every watcher: nobody may change them.
type sharedEvent struct {
	decodeOnce sync.Once
	cur, prev  runtime.Object
	err        error

	mu     sync.Mutex
	frames map[frameKey]*sharedFrame
}

// frameKey names one encoding of an event.
type frameKey struct {
	typ  string
	prev bool
	out  negotiated
}

type sharedFrame struct {
	once  sync.Once
	bytes []byte
	err   error
}

// get returns the shared event of ev at res, creating it (and forgetting
// the oldest) when it is new.
func (s *sharedEvents) get(res *registry.Resource, ev storage.Event) *sharedEvent {
	k := sharedEventKey{gvr: res.GroupVersionResource, key: ev.KV.Key, rev: ev.KV.ModRevision}
	s.mu.Lock()
	defer s.mu.Unlock()
	if se, ok := s.m[k]; ok {
		return se
	}
	if s.m == nil {
		s.m = make(map[sharedEventKey]*sharedEvent, sharedEventsKept)
	}
	delete(s.m, s.ring[s.next])
	s.ring[s.next] = k
	s.next = (s.next + 1) % sharedEventsKept
	se := &sharedEvent{}
	s.m[k] = se
	return se
}

// decoded decodes the event's object and previous object once; a deleted
// object carries the deletion's revision, as upstream's DELETED events.
func (se *sharedEvent) decoded(ctx context.Context, res *registry.Resource, ev storage.Event) (cur, prev runtime.Object, err error) {
	se.decodeOnce.Do(func() {
		// not the first watcher's context: its end must not fail the others
		se.cur, se.prev, se.err = decodeEvent(context.WithoutCancel(ctx), res, ev)
		if se.err == nil && ev.Type == storage.EventDelete && se.prev != nil {
			accessor(se.prev).SetResourceVersion(strconv.FormatInt(ev.KV.ModRevision, 10))
		}
	})
	return se.cur, se.prev, se.err
}

// frame returns the encoding named k, made once by encode.
func (se *sharedEvent) frame(k frameKey, encode func() ([]byte, error)) ([]byte, error) {
	se.mu.Lock()
	if se.frames == nil {
		se.frames = map[frameKey]*sharedFrame{}
	}
	f := se.frames[k]
	if f == nil {
		f = &sharedFrame{}
		se.frames[k] = f
	}
	se.mu.Unlock()
	f.once.Do(func() { f.bytes, f.err = encode() })
	return f.bytes, f.err
}
