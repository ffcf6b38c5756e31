package fanout_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/fanout"
)

func put(key string, rev int64) storage.Event {
	return storage.Event{KV: storage.KeyValue{Key: key, CreateRevision: rev, ModRevision: rev}}
}

func TestSlowWatcherEndsWithoutBlocking(t *testing.T) {
	h := fanout.New(0, 2)
	slow, err := h.Watch(t.Context(), "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := h.Watch(t.Context(), "/other/", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for rev := int64(1); rev <= 10; rev++ {
			h.Publish([]storage.Event{put("/k", rev)})
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked on a watcher that does not read")
	}
	n := 0
	for range slow.Events() {
		n++
	}
	if !errors.Is(slow.Err(), fanout.ErrTooSlow) || n > 3 {
		t.Errorf("slow watcher got %d events and Err() = %v; want at most 3 and %v", n, slow.Err(), fanout.ErrTooSlow)
	}
	h.Publish([]storage.Event{put("/other/x", 11)})
	if ev := <-other.Events(); ev.KV.ModRevision != 11 {
		t.Errorf("other watcher got %+v, want revision 11: it must not be ended with the slow one", ev)
	}
}

// TestReplayThenLive checks the hand-over from history to live events: the
// events published while history is replayed follow it, with no gap and no
// duplicate, whether the history is queued ahead of the live events (it
// fits) or replayed by a goroutine (bufSize 2: it does not).
func TestReplayThenLive(t *testing.T) {
	for _, bufSize := range []int{0, 2} {
		h := fanout.New(3, bufSize)
		var mu sync.Mutex
		var calls [][2]int64
		replay := func(prefix string, after, upTo int64, emit func(storage.Event) bool) error {
			mu.Lock()
			calls = append(calls, [2]int64{after, upTo})
			first := len(calls) == 1
			mu.Unlock()
			if first {
				// Meanwhile revisions 4 and 5 are committed and published.
				h.Publish([]storage.Event{put("/k", 4), put("/k", 5)})
			}
			for rev := after + 1; rev <= upTo; rev++ {
				if !emit(put("/k", rev)) {
					return nil
				}
			}
			return nil
		}
		w, err := h.Watch(t.Context(), "", 1, replay)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if calls[0] != [2]int64{1, 3} {
			t.Errorf("bufSize %d: first replay(after %d, upTo %d), want (1, 3)", bufSize, calls[0][0], calls[0][1])
		}
		mu.Unlock()
		for want := int64(2); want <= 5; want++ {
			select {
			case ev := <-w.Events():
				if ev.KV.ModRevision != want {
					t.Fatalf("bufSize %d: event at revision %d, want %d", bufSize, ev.KV.ModRevision, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("bufSize %d: no event at revision %d", bufSize, want)
			}
		}
		if direct := cap(w.Events()) > 0; direct != (bufSize == 0) {
			t.Errorf("bufSize %d: watcher read from the Hub's queue = %v", bufSize, direct)
		}
		w.Stop()
	}
}

// TestCoalescing: an event after a quiet window is delivered at once; the
// ones that follow within the window wait for its end and go out together;
// a watch from "now" does not get the events still waiting, and one from a
// revision they follow does.
func TestCoalescing(t *testing.T) {
	const window = time.Second
	h := fanout.NewCoalescing(0, 0, window, window) // one watcher: the whole window
	w, err := h.Watch(t.Context(), "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	h.Publish([]storage.Event{put("/k", 1)})
	if n := len(w.Events()); n != 1 {
		t.Fatalf("first event: %d queued at once, want 1", n)
	}
	<-w.Events()
	h.Publish([]storage.Event{put("/k", 2)})
	h.Publish([]storage.Event{put("/k", 3)})
	fromNow, err := h.Watch(t.Context(), "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fromNow.Stop()
	fromOne, err := h.Watch(t.Context(), "", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fromOne.Stop()
	time.Sleep(window / 5)
	if n := len(w.Events()); n != 0 {
		t.Fatalf("events within the window delivered early: %d queued", n)
	}
	for want := int64(2); want <= 3; want++ {
		for _, x := range []storage.Watcher{w, fromOne} {
			select {
			case ev := <-x.Events():
				if ev.KV.ModRevision != want {
					t.Fatalf("event at revision %d, want %d", ev.KV.ModRevision, want)
				}
			case <-time.After(5 * window):
				t.Fatalf("no event at revision %d after the window", want)
			}
		}
	}
	if n := len(fromNow.Events()); n != 0 {
		t.Errorf("a watch from now got %d events published before it", n)
	}
	h.Publish([]storage.Event{put("/k", 4)})
	select {
	case ev := <-fromNow.Events():
		if ev.KV.ModRevision != 4 {
			t.Errorf("watch from now: event at %d, want 4", ev.KV.ModRevision)
		}
	case <-time.After(5 * window):
		t.Fatal("watch from now: no event at revision 4")
	}
}

func TestCloseEndsWatchers(t *testing.T) {
	h := fanout.New(0, 0)
	w, err := h.Watch(t.Context(), "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	if _, ok := <-w.Events(); ok || !errors.Is(w.Err(), storage.ErrClosed) {
		t.Errorf("after Close: Events open %v, Err() = %v; want closed and %v", ok, w.Err(), storage.ErrClosed)
	}
	if _, err := h.Watch(t.Context(), "", 0, nil); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Watch after Close error = %v, want %v", err, storage.ErrClosed)
	}
}

func TestFailEndsWatchersWithItsError(t *testing.T) {
	h := fanout.New(0, 0)
	w, err := h.Watch(t.Context(), "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	broke := errors.New("source broke")
	h.Fail(broke)
	if _, ok := <-w.Events(); ok || !errors.Is(w.Err(), broke) {
		t.Errorf("after Fail: Events open %v, Err() = %v; want closed and %v", ok, w.Err(), broke)
	}
	if _, err := h.Watch(t.Context(), "", 0, nil); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Watch after Fail error = %v, want %v", err, storage.ErrClosed)
	}
}

// TestLiveWatcherEnds: a watcher with no history to replay (its client
// reads the Hub's queue directly) gets the live events and ends, without
// an error, when stopped or when its context ends.
func TestLiveWatcherEnds(t *testing.T) {
	h := fanout.New(5, 0)
	ctx, cancel := context.WithCancel(t.Context())
	byCtx, err := h.Watch(ctx, "/a/", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := h.Watch(t.Context(), "", 6, nil) // from a future revision
	if err != nil {
		t.Fatal(err)
	}
	h.Publish([]storage.Event{put("/a/x", 6), put("/a/y", 7)})
	if ev := <-byCtx.Events(); ev.KV.ModRevision != 6 {
		t.Errorf("first event at %d, want 6", ev.KV.ModRevision)
	}
	if ev := <-stopped.Events(); ev.KV.ModRevision != 7 {
		t.Errorf("watch after 6: first event at %d, want 7", ev.KV.ModRevision)
	}
	cancel()
	stopped.Stop()
	for _, w := range []storage.Watcher{byCtx, stopped} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range w.Events() {
			}
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Events not closed after the context ended or Stop")
		}
		if w.Err() != nil {
			t.Errorf("Err() = %v, want nil", w.Err())
		}
	}
	h.Publish([]storage.Event{put("/a/z", 8)}) // no watcher left: must not block or panic
}
