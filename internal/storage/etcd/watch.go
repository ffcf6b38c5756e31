package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/admitd/admitd/pkg/storage"
)

// Watcher is an etcd watch under a prefix. Besides events it follows
// etcd's progress notifications: Progress is the revision up to which the
// watcher has seen every change under its prefix.
type Watcher struct {
	s        *Store
	events   chan storage.Event
	cancel   context.CancelFunc
	progress atomic.Int64

	mu    sync.Mutex
	ended bool
	err   error
}

var _ storage.Watcher = (*Watcher)(nil)

// Watch streams the changes under prefix after revision afterRevision (0:
// from the current revision), with the previous value of every update and
// delete, and asks etcd for progress notifications. Watches need a leader:
// a member that loses quorum ends them with ErrUnavailable.
func (s *Store) Watch(ctx context.Context, prefix string, afterRevision int64) (storage.Watcher, error) {
	after, err := s.watchStart(ctx, afterRevision)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	w := &Watcher{s: s, events: make(chan storage.Event, 64), cancel: cancel}
	w.progress.Store(after)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		return nil, storage.ErrClosed
	}
	s.watchers[w] = struct{}{}
	s.mu.Unlock()
	from := s.etcdKey(prefix)
	ch := s.client.Watch(wctx, from, clientv3.WithRange(clientv3.GetPrefixRangeEnd(from)),
		clientv3.WithRev(s.etcdRev(after)+1), clientv3.WithPrevKV(), clientv3.WithProgressNotify())
	go w.run(wctx, ch)
	return w, nil
}

// watchStart returns the revision a watch starts after: the current one
// for 0, else afterRevision once a read at it shows it is not compacted (a
// future revision is fine: the watch waits for it).
func (s *Store) watchStart(ctx context.Context, afterRevision int64) (int64, error) {
	if afterRevision == 0 {
		return s.Revision(ctx)
	}
	err := s.call(ctx, "watch", false, func(ctx context.Context) error {
		_, err := s.client.Get(ctx, s.probeKey(), clientv3.WithCountOnly(), clientv3.WithRev(s.etcdRev(afterRevision)))
		return err
	})
	if err != nil && !errors.Is(err, storage.ErrFutureRevision) {
		return 0, err
	}
	return afterRevision, nil
}

// CheckWatchRevision reports whether a watch could start after revision
// rev: ErrCompacted when rev is compacted; a future revision is fine (a
// watch waits for it). For a layer that serves watches from one shared
// watch of its own (kubelayout).
func (s *Store) CheckWatchRevision(ctx context.Context, rev int64) error {
	_, err := s.watchStart(ctx, rev)
	return err
}

// run converts etcd's responses into events until the watch ends.
func (w *Watcher) run(ctx context.Context, ch clientv3.WatchChan) {
	defer close(w.events)
	defer w.unregister()
	for {
		var resp clientv3.WatchResponse
		var ok bool
		select {
		case <-ctx.Done():
			return
		case resp, ok = <-ch:
		}
		if !ok {
			if ctx.Err() == nil {
				w.end(fmt.Errorf("%w: watch closed", ErrUnavailable))
			}
			return
		}
		if err := w.check(resp); err != nil {
			w.end(err)
			return
		}
		if resp.IsProgressNotify() {
			w.progress.Store(w.s.rev(resp.Header.Revision))
			continue
		}
		for _, ev := range resp.Events {
			select {
			case w.events <- w.event(ev):
				w.progress.Store(w.s.rev(ev.Kv.ModRevision))
			case <-ctx.Done():
				return
			}
		}
	}
}

// check maps a response that ends the watch to its error.
func (w *Watcher) check(resp clientv3.WatchResponse) error {
	if resp.CompactRevision != 0 {
		return fmt.Errorf("%w (etcd watch, compacted at %d)", storage.ErrCompacted, w.s.rev(resp.CompactRevision))
	}
	if err := resp.Err(); err != nil {
		return fmt.Errorf("%w: watch: %v", ErrUnavailable, err)
	}
	return nil
}

func (w *Watcher) event(ev *clientv3.Event) storage.Event {
	out := storage.Event{KV: w.s.kv(ev.Kv)}
	if ev.Type == mvccpb.DELETE {
		out.Type = storage.EventDelete
		out.KV = storage.KeyValue{Key: out.KV.Key, ModRevision: out.KV.ModRevision}
	}
	if ev.PrevKv != nil {
		prev := w.s.kv(ev.PrevKv)
		out.PrevKV = &prev
	}
	return out
}

// Events implements storage.Watcher.
func (w *Watcher) Events() <-chan storage.Event { return w.events }

// Err implements storage.Watcher.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stop implements storage.Watcher.
func (w *Watcher) Stop() { w.end(nil) }

// Progress is the revision up to which every change under the prefix has
// been delivered (or is buffered in Events).
func (w *Watcher) Progress() int64 { return w.progress.Load() }

// end records why the watch ends (the first reason wins) and cancels it.
func (w *Watcher) end(err error) {
	w.mu.Lock()
	if !w.ended {
		w.ended, w.err = true, err
	}
	w.mu.Unlock()
	w.cancel()
}

func (w *Watcher) unregister() {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	delete(w.s.watchers, w)
}

// RequestProgress asks etcd to send a progress notification to every
// watcher of this store, so that their Progress catches up with writes
// outside their prefixes.
func (s *Store) RequestProgress(ctx context.Context) error {
	return s.call(ctx, "request progress", false, func(ctx context.Context) error {
		return s.client.RequestProgress(ctx)
	})
}
