// Package fanout is the watch machinery shared by admitd's storage backends,
// for any implementation of storage.Store.
//
// A backend publishes every committed change to a Hub, in revision order. The
// Hub hands each watcher the events under its prefix: first the retained
// history the watcher asked for, read through a backend-supplied Replay
// function, then live events, with no gap and no duplicate between the two.
// A watcher that falls more than its buffer behind is ended with ErrTooSlow
// so that a slow reader never blocks writers.
//
// The package stores no history of its own and knows nothing about how a
// backend persists data.
package fanout

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/admitd/admitd/pkg/storage"
)

// ErrTooSlow ends a watcher whose buffer overflowed because its reader did
// not keep up with the writes. The reader should list again and re-watch.
var ErrTooSlow = errors.New("storage: watcher fell too far behind")

// DefaultBufferSize is the number of events a watcher may lag behind the
// writers before it is ended with ErrTooSlow, when New is given 0.
const DefaultBufferSize = 1024

// Replay calls emit, in revision order, for every retained event under prefix
// whose revision r satisfies after < r <= upTo. It stops early, returning nil,
// when emit returns false, and returns an error wrapping storage.ErrCompacted
// when part of the range has been discarded.
type Replay func(prefix string, after, upTo int64, emit func(storage.Event) bool) error

// Hub fans committed events out to watchers. Its zero value is not usable;
// create one with New.
type Hub struct {
	bufSize int
	// the coalescing window is perWatcher per watcher, at most window; a
	// zero window delivers each Publish at once
	perWatcher, window time.Duration

	mu        sync.Mutex
	rev       int64 // revision of the last delivered event
	published int64 // revision of the last published event
	watchers  map[*watcher]struct{}
	closed    bool
	// pending are published events not yet delivered; a timer delivers
	// them at lastDelivery + window.
	pending      []storage.Event
	timer        *time.Timer
	armed        bool
	lastDelivery time.Time
}

// New returns a Hub whose last published revision is rev (the backend's
// current revision) and whose watchers buffer bufSize events (0 means
// DefaultBufferSize). It delivers each Publish at once.
func New(rev int64, bufSize int) *Hub {
	return NewCoalescing(rev, bufSize, 0, 0)
}

// DefaultCoalescingPerWatcher is how much each watcher widens a
// coalescing Hub's window, for NewCoalescing: waking a watcher and having it
// write to its client costs a few microseconds, so that with this window
// per watcher the wake-ups take a bounded share of the time however fast
// the writes come. (1,000 watchers of a stream of ConfigMap creates on 2
// cores, with the client on the same cores: the server's CPU per delivered
// event fell from 1.7–2.6 µs at 20 µs per watcher, 20 ms at most, to
// 1.3–1.6 µs at 50 µs and 50 ms.)
const DefaultCoalescingPerWatcher = 50 * time.Microsecond

// NewCoalescing is New with a coalescing window of perWatcher per watcher,
// at most maxWindow: events published less than a window after
// the previous delivery wait for the window's end and go out together, so
// that under a stream of writes each watcher wakes once per window rather
// than once per write (and writes its events to its client at once). An
// event published after a quiet window is delivered at once. (1,000
// watchers and 2,000 writes a second, with DefaultCoalescingPerWatcher and
// a 50 ms bound: each watcher wakes 20 times a second instead of 2,000,
// each event waiting at most 50 ms.)
func NewCoalescing(rev int64, bufSize int, perWatcher, maxWindow time.Duration) *Hub {
	if bufSize <= 0 {
		bufSize = DefaultBufferSize
	}
	h := &Hub{bufSize: bufSize, perWatcher: perWatcher, window: maxWindow, rev: rev, published: rev, watchers: make(map[*watcher]struct{})}
	if maxWindow > 0 {
		h.timer = time.AfterFunc(time.Hour, h.deliverPending)
		h.timer.Stop()
	}
	return h
}

// Publish delivers committed events, which must follow every event published
// before them in revision order. It never blocks: a watcher whose buffer is
// full is ended with ErrTooSlow. The events are shared by all watchers and
// must not be modified afterwards.
func (h *Hub) Publish(events []storage.Event) {
	if len(events) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.published = events[len(events)-1].KV.ModRevision
	if h.window == 0 {
		h.deliverAllLocked(events)
		return
	}
	h.pending = append(h.pending, events...)
	if h.armed {
		return
	}
	now := time.Now()
	window := min(h.window, time.Duration(len(h.watchers))*h.perWatcher)
	if wait := h.lastDelivery.Add(window).Sub(now); wait > 0 {
		h.armed = true
		h.timer.Reset(wait)
		return
	}
	h.lastDelivery = now
	h.deliverPendingLocked()
}

// deliverPending is the coalescing timer's delivery.
func (h *Hub) deliverPending() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed = false
	h.lastDelivery = time.Now()
	h.deliverPendingLocked()
}

func (h *Hub) deliverPendingLocked() {
	if len(h.pending) == 0 || h.closed {
		return
	}
	h.deliverAllLocked(h.pending)
	clear(h.pending)
	h.pending = h.pending[:0]
}

func (h *Hub) deliverAllLocked(events []storage.Event) {
	h.rev = events[len(events)-1].KV.ModRevision
	for w := range h.watchers {
		h.deliverLocked(w, events)
	}
}

// deliverLocked queues the events under w's prefix, or ends w if it is full.
func (h *Hub) deliverLocked(w *watcher, events []storage.Event) {
	for _, ev := range events {
		if ev.KV.ModRevision <= w.from || !strings.HasPrefix(ev.KV.Key, w.prefix) {
			continue
		}
		if !w.in.push(ev, h.bufSize) {
			h.dropLocked(w, ErrTooSlow)
			return
		}
	}
}

// Watch starts a watcher for the events under prefix with a revision greater
// than after; 0 means "from the last published event on". Retained history
// up to the last published event is read through replay, which may be nil
// when after is 0. The backend checks after against its compacted revision
// before calling Watch.
func (h *Hub) Watch(ctx context.Context, prefix string, after int64, replay Replay) (storage.Watcher, error) {
	w := &watcher{
		hub:    h,
		prefix: prefix,
		in:     newQueue(h.bufSize),
		out:    make(chan storage.Event),
		done:   make(chan struct{}),
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, storage.ErrClosed
	}
	upTo := h.rev
	if after == 0 {
		after = h.published // events still pending are not the watch's
	}
	if after < upTo && replay != nil {
		h.mu.Unlock()
		switch ok, err := h.watchFromHistory(ctx, w, after, upTo, replay); {
		case err != nil:
			return nil, err
		case ok:
			return w, nil
		}
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return nil, storage.ErrClosed
		}
		upTo = h.rev
	}
	w.from = max(after, upTo)
	direct := after >= upTo || replay == nil
	if direct {
		h.registerDirectLocked(ctx, w)
	} else {
		h.watchers[w] = struct{}{}
	}
	h.mu.Unlock()

	if !direct {
		go w.run(ctx, after, upTo, replay)
	}
	return w, nil
}

// registerDirectLocked registers w to be read by its client straight from
// the Hub's queue, without a goroutine passing each event on (so that the
// client sees how many events wait, and writes them out together).
func (h *Hub) registerDirectLocked(ctx context.Context, w *watcher) {
	w.out = w.in.ch
	w.stopCtx = context.AfterFunc(ctx, func() { h.remove(w) })
	h.watchers[w] = struct{}{}
}

// A watcher from the past is direct when its history fills at most half its
// queue (historyShare), leaving the rest for the live events.
const historyShare = 2

// historyAttempts is how often a watcher from the past reads the history
// written meanwhile before it settles for a goroutine replaying it.
const historyAttempts = 3

// watchFromHistory starts w as a direct watcher when the history it needs,
// (after, upTo] and whatever is delivered while it is read, fits in its
// queue: the history is read without the lock, then queued ahead of the
// live events under it. ok is false when it did not fit (or kept moving),
// and w is not registered.
func (h *Hub) watchFromHistory(ctx context.Context, w *watcher, after, upTo int64, replay Replay) (ok bool, err error) {
	room := h.bufSize / historyShare
	history := make([]storage.Event, 0, min(upTo-after, int64(room)))
	for range historyAttempts {
		fits := true
		err := replay(w.prefix, after, upTo, func(ev storage.Event) bool {
			if rev := ev.KV.ModRevision; rev <= after || rev > upTo {
				return true
			}
			if len(history) == room {
				fits = false
				return false
			}
			history = append(history, ev)
			return true
		})
		if err != nil || !fits {
			return false, err
		}
		h.mu.Lock()
		switch {
		case h.closed:
			h.mu.Unlock()
			return false, storage.ErrClosed
		case h.rev == upTo:
			for _, ev := range history {
				w.in.push(ev, h.bufSize) // it fits: history is at most half
			}
			w.from = upTo
			h.registerDirectLocked(ctx, w)
			h.mu.Unlock()
			return true, nil
		}
		after, upTo = upTo, h.rev
		h.mu.Unlock()
	}
	return false, nil
}

// Close ends every watcher with storage.ErrClosed and refuses new ones.
func (h *Hub) Close() { h.Fail(storage.ErrClosed) }

// Fail ends every watcher with err as its Err and refuses new ones (with
// storage.ErrClosed): for a Hub fed by a source that broke, such as
// another store's watch.
func (h *Hub) Fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.timer != nil {
		h.timer.Stop()
	}
	for w := range h.watchers {
		h.dropLocked(w, err)
	}
}

// remove unregisters w, if it still is registered, without an error.
func (h *Hub) remove(w *watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.watchers[w]; ok {
		h.dropLocked(w, nil)
	}
}

// dropLocked unregisters w and closes its input; reason becomes its Err.
func (h *Hub) dropLocked(w *watcher, reason error) {
	delete(h.watchers, w)
	w.reason = reason     // read by w.run after it sees w.in closed
	if w.stopCtx != nil { // direct: the client sees w.in closed
		w.setErr(reason)
	}
	w.in.drop()
}

// watcher implements storage.Watcher. Its goroutine replays history, then
// forwards live events from in (filled by the Hub) to out (read by the
// client), skipping any event it has already delivered. A watcher with no
// history to replay is direct: out is in, and it has no goroutine.
type watcher struct {
	hub    *Hub
	prefix string
	from   int64 // live events up to from are not queued (a watch from a future revision)
	in     *queue
	out    chan storage.Event
	done   chan struct{}
	reason error // set by the Hub before it closes in
	// stopCtx, for a direct watcher, stops the removal on ctx's end
	stopCtx func() bool

	stopOnce sync.Once
	mu       sync.Mutex
	err      error
}

var _ storage.Watcher = (*watcher)(nil)

func (w *watcher) Events() <-chan storage.Event { return w.out }

// Pending tells whether events wait for the reader in Events() or behind
// it (its channel holds 256), so that a reader can write a burst out at
// once: above 0, an event will come. For a watcher replaying history, the
// live events queued behind the replay count too: its goroutine passes
// each on after the replay (the Hub queues only events after the replay's
// end, so run's skip of older ones never drops a counted event).
func (w *watcher) Pending() int { return w.in.pending() }

func (w *watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *watcher) Stop() {
	w.stopOnce.Do(func() {
		if w.stopCtx != nil {
			w.stopCtx()
		}
		w.hub.remove(w)
		close(w.done)
	})
}

func (w *watcher) run(ctx context.Context, after, upTo int64, replay Replay) {
	defer close(w.out)
	if after < upTo && replay != nil {
		err := replay(w.prefix, after, upTo, func(ev storage.Event) bool { return w.send(ctx, ev) })
		if err != nil {
			w.hub.remove(w)
			w.setErr(err)
			return
		}
	}
	// Live events all follow upTo; for a watch from a future revision the
	// ones up to after are skipped.
	last := max(after, upTo)
	for {
		select {
		case ev, ok := <-w.in.ch:
			if !ok {
				w.setErr(w.reason)
				return
			}
			if ev.KV.ModRevision <= last {
				continue
			}
			if !w.send(ctx, ev) {
				w.hub.remove(w)
				return
			}
			last = ev.KV.ModRevision
		case <-w.done:
			return
		case <-ctx.Done():
			w.hub.remove(w)
			return
		}
	}
}

// send delivers ev to the client; false means the watch was stopped.
func (w *watcher) send(ctx context.Context, ev storage.Event) bool {
	select {
	case w.out <- ev:
		return true
	case <-w.done:
		return false
	case <-ctx.Done():
		return false
	}
}

func (w *watcher) setErr(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = err
}
