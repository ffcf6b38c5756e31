package fanout_test

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/fanout"
)

// publish publishes revisions from..to of key, one Publish each.
func publish(h *fanout.Hub, key string, from, to int64) {
	for rev := from; rev <= to; rev++ {
		h.Publish([]storage.Event{put(key, rev)})
	}
}

// TestLaggingWatcherGetsEveryEventInOrder lets a watcher fall hundreds of
// events behind (past its channel, within its buffer), twice: it gets every
// event once, in order.
func TestLaggingWatcherGetsEveryEventInOrder(t *testing.T) {
	h := fanout.New(0, 1000)
	w, err := h.Watch(t.Context(), "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	want := int64(1)
	for round, upTo := range []int64{900, 1700} {
		publish(h, "/k", want, upTo)
		for ; want <= upTo; want++ {
			select {
			case ev, ok := <-w.Events():
				if !ok || ev.KV.ModRevision != want {
					t.Fatalf("round %d: got revision %d (open %v), want %d", round, ev.KV.ModRevision, ok, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("round %d: revision %d never came", round, want)
			}
		}
	}
	if err := w.Err(); err != nil {
		t.Errorf("Err() = %v, want nil", err)
	}
}

// TestTooSlowAfterOverflowIsAPrefix: a watcher that lags past its buffer
// ends with ErrTooSlow after a gap-free prefix of the events.
func TestTooSlowAfterOverflowIsAPrefix(t *testing.T) {
	h := fanout.New(0, 200)
	w, err := h.Watch(t.Context(), "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	publish(h, "/k", 1, 300)
	var got int64
	for ev := range w.Events() {
		if ev.KV.ModRevision != got+1 {
			t.Fatalf("got revision %d after %d: a gap", ev.KV.ModRevision, got)
		}
		got = ev.KV.ModRevision
	}
	if !errors.Is(w.Err(), fanout.ErrTooSlow) || got > 200 {
		t.Errorf("got %d events and Err() = %v; want at most 200 and %v", got, w.Err(), fanout.ErrTooSlow)
	}
}

// TestIdleWatchersAreSmall: a watcher that does not lag holds a few
// kilobytes, not its whole buffer (74 KiB of events at the default size).
func TestIdleWatchersAreSmall(t *testing.T) {
	h := fanout.New(0, 0)
	const n = 200
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	watchers := make([]storage.Watcher, n)
	for i := range watchers {
		w, err := h.Watch(t.Context(), "/k", 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		watchers[i] = w
	}
	runtime.ReadMemStats(&after)
	for _, w := range watchers {
		w.Stop()
	}
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 8<<10 {
		t.Errorf("a watcher allocated %d bytes, want at most 8 KiB", per)
	}
}

// TestLaggingWatchersHoldPointers: a watcher lagging as far as it may
// holds pointers to the shared events, not copies (74 KiB each).
func TestLaggingWatchersHoldPointers(t *testing.T) {
	h := fanout.New(0, 1000)
	const n = 100
	watchers := make([]storage.Watcher, n)
	for i := range watchers {
		w, err := h.Watch(t.Context(), "/k", 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		watchers[i] = w
	}
	events := make([]storage.Event, 990)
	for i := range events {
		events[i] = put("/k", int64(i+1))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h.Publish(events)
	runtime.ReadMemStats(&after)
	for _, w := range watchers {
		if w.Err() != nil {
			t.Fatalf("a watcher ended: %v", w.Err())
		}
		w.Stop()
	}
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 24<<10 {
		t.Errorf("a watcher lagging 990 events allocated %d bytes, want at most 24 KiB", per)
	}
}
