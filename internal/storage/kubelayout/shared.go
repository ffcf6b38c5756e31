package kubelayout

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/fanout"
)

// A server's caches and controllers watch a few dozen prefixes, and about
// ten of them are wider than one resource (a group, all of core), which the
// wrapped store can only serve as a watch of all of /registry/. Each watch
// of the wrapped store is a watch of its own in etcd: every write was sent
// by etcd, received and mapped as many times as there are wide watchers.
// The store therefore serves its watches from one shared watch of
// /registry/ (sharedWatch): each event is received and mapped to admitd's
// form once, then handed to the watchers under whose prefix it falls
// (fanout). A shared watch starts a little before the watcher that starts
// it (backfill) and remembers its latest events (ringSize, ringBytes), so
// that a watcher that starts a little in the past (at the revision of the
// list it just made) joins it too; a watcher from further back gets a
// watch of its own, as before.
const (
	ringSize  = 4096
	ringBytes = 16 << 20
	backfill  = 1024 // revisions a new shared watch starts before the first watcher
)

// sharedWatch is one watch of the wrapped store under layout.Root, fanned
// out to the store's watchers.
type sharedWatch struct {
	fan    *fanout.Hub
	cancel context.CancelFunc

	mu     sync.Mutex
	failed bool
	base   int64           // the ring holds every event after base
	last   int64           // revision of the last event published
	ring   []storage.Event // in revision order
	size   int             // bytes of values in ring
	done   chan struct{}   // closed when the shared watch has ended
}

// revisionChecker is implemented by wrapped stores that can tell whether
// a watch can start at a revision without starting one (etcd).
type revisionChecker interface {
	CheckWatchRevision(ctx context.Context, rev int64) error
}

// checkWatchRevision fails with ErrCompacted when after is compacted.
func (s *Store) checkWatchRevision(ctx context.Context, after int64) error {
	if c, ok := s.Store.(revisionChecker); ok {
		return c.CheckWatchRevision(ctx, after)
	}
	compacted, err := s.Store.CompactedRevision(ctx)
	if err == nil && after < compacted {
		err = storage.ErrCompacted
	}
	return err
}

// watchShared joins prefix's watch to the shared watch, starting one if
// none runs; ok is false when the shared watch does not reach back to
// after.
func (s *Store) watchShared(ctx context.Context, prefix string, after int64) (w storage.Watcher, ok bool, err error) {
	if after != 0 {
		if err := s.checkWatchRevision(ctx, after); err != nil {
			return nil, true, err
		}
	} else {
		// from now: the store's revision, which the shared watch may not
		// have reached yet
		rev, err := s.Store.Revision(ctx)
		if err != nil {
			return nil, true, err
		}
		after = rev
	}
	sw, err := s.sharedWatchFrom(ctx, after)
	if err != nil {
		return nil, true, err
	}
	return sw.join(ctx, prefix, after)
}

// sharedWatchFrom returns the running shared watch, or starts one after
// revision after.
func (s *Store) sharedWatchFrom(ctx context.Context, after int64) (*sharedWatch, error) {
	s.sharedMu.Lock()
	defer s.sharedMu.Unlock()
	if s.closed {
		return nil, storage.ErrClosed
	}
	if sw := s.shared; sw != nil && !sw.isFailed() {
		return sw, nil
	}
	// Reach back a little: the watchers a server starts together each
	// list first, then watch from the list's revision, and the first to
	// watch is not always the first to have listed.
	if back := max(after-backfill, 1); back < after && s.checkWatchRevision(ctx, back) == nil {
		after = back
	}
	// the shared watch outlives the watch that started it
	wctx, cancel := context.WithCancel(context.Background())
	inner, err := s.Store.Watch(wctx, layout.Root, after)
	if err != nil {
		cancel()
		return nil, err
	}
	sw := &sharedWatch{fan: fanout.New(after, 0), cancel: cancel, base: after, last: after, done: make(chan struct{})}
	s.shared = sw
	go sw.run(s, inner)
	return sw, nil
}

// run maps the wrapped store's events and publishes them until the watch
// ends, then ends every watcher with its error.
func (sw *sharedWatch) run(s *Store, inner storage.Watcher) {
	defer close(sw.done)
	defer inner.Stop()
	for ev := range inner.Events() {
		out, ok, err := s.event(ev, layout.Root)
		if err != nil {
			sw.fail(err)
			return
		}
		if ok {
			sw.publish(out)
		}
	}
	err := inner.Err()
	if err == nil {
		err = storage.ErrClosed
	}
	sw.fail(err)
}

// publish remembers ev and hands it to the watchers.
func (sw *sharedWatch) publish(ev storage.Event) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.ring = append(sw.ring, ev)
	sw.size += eventBytes(ev)
	for len(sw.ring) > ringSize || (sw.size > ringBytes && len(sw.ring) > 1) {
		sw.base = sw.ring[0].KV.ModRevision
		sw.size -= eventBytes(sw.ring[0])
		sw.ring[0] = storage.Event{}
		sw.ring = sw.ring[1:]
	}
	sw.last = ev.KV.ModRevision
	sw.fan.Publish([]storage.Event{ev})
}

func eventBytes(ev storage.Event) int {
	n := len(ev.KV.Key) + len(ev.KV.Value)
	if ev.PrevKV != nil {
		n += len(ev.PrevKV.Value)
	}
	return n
}

// join adds a watcher of the events under prefix after revision after;
// ok is false when the ring does not reach back to after (or the shared
// watch failed).
func (sw *sharedWatch) join(ctx context.Context, prefix string, after int64) (storage.Watcher, bool, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.failed || after < sw.base {
		return nil, false, nil
	}
	var history []storage.Event
	if after < sw.last {
		start, _ := slices.BinarySearchFunc(sw.ring, after+1, func(ev storage.Event, rev int64) int {
			return compareRev(ev.KV.ModRevision, rev)
		})
		for _, ev := range sw.ring[start:] {
			if strings.HasPrefix(ev.KV.Key, prefix) {
				history = append(history, ev)
			}
		}
	}
	// the fan-out's last revision is sw.last (published under sw.mu): it
	// replays (after, sw.last] from history, then live events follow
	w, err := sw.fan.Watch(ctx, prefix, after, func(_ string, _, _ int64, emit func(storage.Event) bool) error {
		for _, ev := range history {
			if !emit(ev) {
				return nil
			}
		}
		return nil
	})
	if errors.Is(err, storage.ErrClosed) { // failed meanwhile
		return nil, false, nil
	}
	return w, true, err
}

func compareRev(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fail ends the shared watch: every watcher ends with err (and re-lists,
// as after any failed watch); the next Watch starts a new shared watch.
func (sw *sharedWatch) fail(err error) {
	sw.mu.Lock()
	sw.failed = true
	sw.ring, sw.size = nil, 0
	sw.mu.Unlock()
	sw.cancel()
	sw.fan.Fail(err)
}

func (sw *sharedWatch) isFailed() bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.failed
}

// closeShared ends the shared watch for Close.
func (s *Store) closeShared() {
	s.sharedMu.Lock()
	s.closed = true
	sw := s.shared
	s.shared = nil
	s.sharedMu.Unlock()
	if sw != nil {
		sw.cancel()
		<-sw.done
	}
}
