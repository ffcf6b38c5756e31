package manifest

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Recheck is how often a manifest directory is read again for changes,
// besides the file system notifications Watch follows (upstream watches the
// directory and also polls every minute).
const Recheck = 2 * time.Second

// Loaded is a loaded manifest set with the directory hash it came from.
type Loaded[T any] struct {
	Hash  string
	Value T
}

// Reloader keeps the result of loading a directory, loading it again in
// the background when a reader finds it due. A load that fails keeps the
// previous result.
type Reloader[T any] struct {
	load    func() (Loaded[T], error)
	log     *slog.Logger
	what    string
	observe func(error)

	current atomic.Pointer[Loaded[T]]
	mu      sync.Mutex
	checked time.Time
	busy    bool // a load is running
	again   bool // the directory changed during it: load once more
}

// NewReloader loads once; the error is the caller's start-up failure.
// observe, when not nil, is told of every load that counts for the reload
// metrics: the initial load, a failed reload, and a successful one that
// changed the hash (an unchanged directory is not reported, as upstream
// short-circuits it).
func NewReloader[T any](load func() (Loaded[T], error), log *slog.Logger, what string, observe func(error)) (*Reloader[T], error) {
	if observe == nil {
		observe = func(error) {}
	}
	first, err := load()
	if err != nil {
		return nil, err
	}
	observe(nil)
	r := &Reloader[T]{load: load, log: log, what: what, observe: observe, checked: time.Now()}
	r.current.Store(&first)
	return r, nil
}

// Get returns the current result and starts a reload when one is due.
func (r *Reloader[T]) Get() *Loaded[T] {
	r.mu.Lock()
	due := !r.busy && time.Since(r.checked) > Recheck
	if due {
		r.busy, r.checked = true, time.Now()
	}
	r.mu.Unlock()
	if due {
		go r.reload()
	}
	return r.current.Load()
}

// reload loads the directory, and again while changes arrived during a
// load (see reloadNow).
func (r *Reloader[T]) reload() {
	for {
		r.loadOnce()
		r.mu.Lock()
		if !r.again {
			r.busy = false
			r.mu.Unlock()
			return
		}
		r.again = false
		r.mu.Unlock()
	}
}

func (r *Reloader[T]) loadOnce() {
	next, err := r.load()
	if err != nil {
		r.log.Error("reloading static manifests", "what", r.what, "err", err)
		r.observe(err)
		return
	}
	if next.Hash != r.current.Load().Hash {
		r.current.Store(&next)
		r.observe(nil)
		r.log.Info("reloaded static manifests", "what", r.what, "hash", next.Hash)
	}
}
