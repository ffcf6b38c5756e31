package kubelayout

import (
	"sync"

	"github.com/admitd/admitd/pkg/storage"
)

// watcher maps the events of a watch in upstream's layout.
type watcher struct {
	inner  storage.Watcher
	events chan storage.Event
	done   chan struct{}
	stop   sync.Once

	mu  sync.Mutex
	err error
}

func (w *watcher) run(s *Store, prefix string) {
	defer close(w.events)
	for ev := range w.inner.Events() {
		out, ok, err := s.event(ev, prefix)
		if err != nil {
			w.fail(err)
			return
		}
		if !ok {
			continue
		}
		select {
		case w.events <- out:
		case <-w.done:
			return
		}
	}
	if err := w.inner.Err(); err != nil {
		w.fail(err)
	}
}

// event maps ev, or leaves it out (ok false) when its key is not under
// admitd's prefix.
func (s *Store) event(ev storage.Event, prefix string) (storage.Event, bool, error) {
	kv, ok, err := s.kvUnder(ev.KV, prefix)
	if !ok || err != nil {
		return ev, false, err
	}
	ev.KV = kv
	if ev.PrevKV != nil {
		prev, _, err := s.kv(*ev.PrevKV)
		if err != nil {
			return ev, false, err
		}
		ev.PrevKV = &prev
	}
	return ev, true, nil
}

func (w *watcher) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = err
	w.inner.Stop()
}

func (w *watcher) Events() <-chan storage.Event { return w.events }

func (w *watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *watcher) Stop() {
	w.stop.Do(func() { close(w.done) })
	w.inner.Stop()
}
