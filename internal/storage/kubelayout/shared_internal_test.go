package kubelayout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// breakable counts the watches of the store it wraps and can end them
// with an error, as an etcd watch ends when the cluster goes away.
type breakable struct {
	storage.Store
	mu      sync.Mutex
	watches []*breakableWatch
}

type breakableWatch struct {
	storage.Watcher
	events chan storage.Event
	mu     sync.Mutex
	err    error
	broken chan struct{}
}

func (b *breakable) Watch(ctx context.Context, prefix string, after int64) (storage.Watcher, error) {
	inner, err := b.Store.Watch(ctx, prefix, after)
	if err != nil {
		return nil, err
	}
	w := &breakableWatch{Watcher: inner, events: make(chan storage.Event), broken: make(chan struct{})}
	go func() {
		defer close(w.events)
		for {
			select {
			case ev, ok := <-inner.Events():
				if !ok {
					return
				}
				select {
				case w.events <- ev:
				case <-w.broken:
					return
				}
			case <-w.broken:
				return
			}
		}
	}()
	b.mu.Lock()
	b.watches = append(b.watches, w)
	b.mu.Unlock()
	return w, nil
}

func (b *breakable) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.watches)
}

// breakAll ends every watch so far with err.
func (b *breakable) breakAll(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, w := range b.watches {
		w.mu.Lock()
		if w.err == nil {
			w.err = err
			close(w.broken)
		}
		w.mu.Unlock()
	}
}

func (w *breakableWatch) Events() <-chan storage.Event { return w.events }

func (w *breakableWatch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	return w.Watcher.Err()
}

func newSharedTestStore(t *testing.T) (*Store, *breakable) {
	inner := &breakable{Store: memory.New()}
	s := New(inner, registry.NewCatalogue().Resources())
	t.Cleanup(func() { _ = s.Close() })
	return s, inner
}

// written is a write made by a test: its key and revision.
type written struct {
	key string
	rev int64
}

func create(t *testing.T, s *Store, key string) written {
	t.Helper()
	kv, err := s.Create(t.Context(), key, nil)
	if err != nil {
		t.Fatalf("Create(%s): %v", key, err)
	}
	return written{key, kv.ModRevision}
}

// expectEvents reads from w the writes after revision after under prefix,
// in order, and then nothing more.
func expectEvents(t *testing.T, w storage.Watcher, all []written, prefix string, after int64) {
	t.Helper()
	for _, wr := range all {
		if wr.rev <= after || !strings.HasPrefix(wr.key, prefix) {
			continue
		}
		select {
		case ev, ok := <-w.Events():
			if !ok {
				t.Fatalf("watch of %s after %d ended (%v) before %s@%d", prefix, after, w.Err(), wr.key, wr.rev)
			}
			if ev.KV.Key != wr.key || ev.KV.ModRevision != wr.rev {
				t.Fatalf("watch of %s after %d: got %s@%d, want %s@%d", prefix, after, ev.KV.Key, ev.KV.ModRevision, wr.key, wr.rev)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("watch of %s after %d: no event for %s@%d", prefix, after, wr.key, wr.rev)
		}
	}
	select {
	case ev := <-w.Events():
		t.Fatalf("watch of %s after %d: unexpected %s@%d", prefix, after, ev.KV.Key, ev.KV.ModRevision)
	case <-time.After(20 * time.Millisecond):
	}
}

var sharedTestKeys = []string{
	"/registry/core/configmaps/a/c%d", "/registry/core/configmaps/b/c%d", "/registry/core/services/a/s%d",
	"/registry/rbac.authorization.k8s.io/clusterroles/r%d", "/registry/apps/deployments/a/d%d",
	"/registry/admissionregistration.k8s.io/validatingwebhookconfigurations/v%d",
	"/registry/stable.example.com/crontabs/a/x%d",
}

// TestSharedWatch: watchers of wide and narrow prefixes, started now or at
// past revisions, get exactly the events a watch of their own gives, from
// one watch of the wrapped store.
func TestSharedWatch(t *testing.T) {
	s, inner := newSharedTestStore(t)
	var all []written
	for i := range 3 {
		for _, k := range sharedTestKeys {
			all = append(all, create(t, s, fmt.Sprintf(k, i)))
		}
	}
	type started struct {
		w      storage.Watcher
		prefix string
		after  int64
	}
	var watchers []started
	prefixes := []string{"/registry/", "/registry/core/", "/registry/core/configmaps/a/", "/registry/rbac.authorization.k8s.io/",
		"/registry/admissionregistration.k8s.io/", "/registry/stable.example.com/crontabs/", "/registry/apps/deployments/"}
	for i := 3; i < 8; i++ {
		for j, prefix := range prefixes {
			after := int64(0)
			if j%2 == 1 { // from a past revision (as after a list)
				after = all[len(all)-1-j].rev
			}
			w, err := s.Watch(t.Context(), prefix, after)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if after == 0 {
				after = all[len(all)-1].rev
			}
			watchers = append(watchers, started{w, prefix, after})
		}
		for _, k := range sharedTestKeys {
			all = append(all, create(t, s, fmt.Sprintf(k, i)))
		}
	}
	for _, st := range watchers {
		expectEvents(t, st.w, all, st.prefix, st.after)
	}
	if n := inner.count(); n != 1 {
		t.Errorf("%d watches of the wrapped store, want 1 (shared)", n)
	}
}

// TestSharedWatchFromFurtherBack: a watcher from a revision the shared
// watch does not remember gets a watch of its own, with all the history.
func TestSharedWatchFromFurtherBack(t *testing.T) {
	s, inner := newSharedTestStore(t)
	first := create(t, s, "/registry/core/configmaps/a/first")
	w, err := s.Watch(t.Context(), "/registry/", 0) // starts the shared watch
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	all := []written{first}
	for i := range ringSize + 10 {
		all = append(all, create(t, s, fmt.Sprintf("/registry/core/configmaps/a/c%d", i)))
		if i%500 == 0 { // the wrapped memory store ends a watch that lags by 1024 events
			waitShared(t, s, all[len(all)-1].rev)
		}
	}
	waitShared(t, s, all[len(all)-1].rev)
	if s.shared.base <= first.rev {
		t.Fatalf("the ring still reaches back to %d after %d events", s.shared.base, ringSize+10)
	}
	old, err := s.Watch(t.Context(), "/registry/core/configmaps/a/", first.rev)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Stop()
	if _, own := old.(*watcher); !own || inner.count() != 2 {
		t.Errorf("watch from before the ring: %T, %d watches of the wrapped store; want a watch of its own (2)", old, inner.count())
	}
	expectEvents(t, old, all, "/registry/core/configmaps/a/", first.rev)
	recent, err := s.Watch(t.Context(), "/registry/core/", all[len(all)-5].rev)
	if err != nil {
		t.Fatal(err)
	}
	defer recent.Stop()
	if _, own := recent.(*watcher); own {
		t.Error("a watch from a revision in the ring got a watch of its own")
	}
	expectEvents(t, recent, all, "/registry/core/", all[len(all)-5].rev)
}

// waitShared waits until the shared watch has published revision rev.
func waitShared(t *testing.T, s *Store, rev int64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		s.shared.mu.Lock()
		last := s.shared.last
		s.shared.mu.Unlock()
		if last >= rev {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shared watch is at %d, want %d", last, rev)
		}
	}
}

// TestSharedWatchBreaks: when the shared watch ends with an error, every
// watcher ends with it; the next Watch starts a new shared watch.
func TestSharedWatchBreaks(t *testing.T) {
	s, inner := newSharedTestStore(t)
	create(t, s, "/registry/core/configmaps/a/zero")
	a, err := s.Watch(t.Context(), "/registry/core/", 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Watch(t.Context(), "/registry/apps/", 0)
	if err != nil {
		t.Fatal(err)
	}
	lost := errors.New("etcd cluster unavailable")
	inner.breakAll(lost)
	for _, w := range []storage.Watcher{a, b} {
		for range w.Events() {
		}
		if !errors.Is(w.Err(), lost) {
			t.Errorf("Err() = %v, want %v", w.Err(), lost)
		}
	}
	before := create(t, s, "/registry/core/configmaps/a/before")
	after := create(t, s, "/registry/core/configmaps/a/after")
	c, err := s.Watch(t.Context(), "/registry/core/", before.rev-1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	expectEvents(t, c, []written{before, after}, "/registry/core/", before.rev-1)
	if inner.count() != 2 {
		t.Errorf("%d watches of the wrapped store, want 2 (a new shared one)", inner.count())
	}
}

// TestSharedWatchCompacted: a watch from a compacted revision fails with
// ErrCompacted; Close ends the watchers with ErrClosed.
func TestSharedWatchCompacted(t *testing.T) {
	s, _ := newSharedTestStore(t)
	create(t, s, "/registry/core/configmaps/a/zero")
	w, err := s.Watch(t.Context(), "/registry/", 0)
	if err != nil {
		t.Fatal(err)
	}
	one := create(t, s, "/registry/core/configmaps/a/one")
	create(t, s, "/registry/core/configmaps/a/two")
	if err := s.Compact(t.Context(), one.rev); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Watch(t.Context(), "/registry/core/", one.rev-1); !errors.Is(err, storage.ErrCompacted) {
		t.Errorf("Watch at a compacted revision: %v, want %v", err, storage.ErrCompacted)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range w.Events() {
	}
	if !errors.Is(w.Err(), storage.ErrClosed) {
		t.Errorf("after Close Err() = %v, want %v", w.Err(), storage.ErrClosed)
	}
	if _, err := s.Watch(t.Context(), "/registry/", 0); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Watch after Close: %v, want %v", err, storage.ErrClosed)
	}
}
