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
	w := watch(t, h, "")
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
	h := fanout.New(0, 600)
	w := watch(t, h, "")
	defer w.Stop()
	publish(h, "/k", 1, 900)
	var got int64
	for ev := range w.Events() {
		if ev.KV.ModRevision != got+1 {
			t.Fatalf("got revision %d after %d: a gap", ev.KV.ModRevision, got)
		}
		got = ev.KV.ModRevision
	}
	if !errors.Is(w.Err(), fanout.ErrTooSlow) || got > 600 {
		t.Errorf("got %d events and Err() = %v; want at most 600 and %v", got, w.Err(), fanout.ErrTooSlow)
	}
}

// TestIdleWatchersAreSmall: a watcher that does not lag holds its channel
// (~20 KiB), not its whole buffer (74 KiB of events at the default size).
func TestIdleWatchersAreSmall(t *testing.T) {
	h := fanout.New(0, 0)
	const n = 200
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	watchers := make([]storage.Watcher, n)
	for i := range watchers {
		watchers[i] = watch(t, h, "/k")
	}
	runtime.ReadMemStats(&after)
	for _, w := range watchers {
		w.Stop()
	}
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 24<<10 {
		t.Errorf("a watcher allocated %d bytes, want at most 24 KiB", per)
	}
}

// TestLaggingWatcherKeepsOnlyItsEvents: a watcher of a quiet prefix that
// lags keeps its own events, not the batches they were published in (whose
// other events here hold 256 KiB each).
func TestLaggingWatcherKeepsOnlyItsEvents(t *testing.T) {
	h := fanout.New(0, 1000)
	w := watch(t, h, "/a/")
	defer w.Stop()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for rev := int64(1); rev <= 800; rev += 2 {
		big := storage.Event{KV: storage.KeyValue{Key: "/b/x", Value: make([]byte, 256<<10), CreateRevision: rev, ModRevision: rev}}
		h.Publish([]storage.Event{big, put("/a/x", rev+1)})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if w.Err() != nil {
		t.Fatalf("the watcher ended: %v", w.Err())
	}
	if kept := int64(after.HeapAlloc) - int64(before.HeapAlloc); kept > 10<<20 {
		t.Errorf("the lagging watcher keeps %d MiB alive, want its 400 small events", kept>>20)
	}
}

// watch starts a watcher of prefix from now on.
func watch(t *testing.T, h *fanout.Hub, prefix string) storage.Watcher {
	t.Helper()
	w, err := h.Watch(t.Context(), prefix, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
