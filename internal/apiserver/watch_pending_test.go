package apiserver

import (
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/fanout"
)

// TestPendingOfCountsBehindTheChannel: a watch's reader keeps gathering
// while events wait behind its watcher's channel, and stops (to flush)
// only when none does. (The moment the channel is empty with events behind
// it is brief, so this catches a count of the channel alone only now and
// then; fanout's TestPendingCountsTheOverflow tests the count itself.)
func TestPendingOfCountsBehindTheChannel(t *testing.T) {
	hub := fanout.New(0, 1000)
	w, err := hub.Watch(t.Context(), "/k", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const n = 700
	events := make([]storage.Event, n)
	for i := range events {
		events[i] = storage.Event{KV: storage.KeyValue{Key: "/k", CreateRevision: int64(i + 1), ModRevision: int64(i + 1)}}
	}
	hub.Publish(events)
	pending := pendingOf(w)
	if _, ok := w.(interface{ Pending() int }); !ok {
		t.Fatal("the fanout watcher does not tell what waits behind its channel")
	}
	for i := 1; i <= n; i++ {
		if i > 1 && i < n && pending() == 0 {
			t.Fatalf("pending = 0 with events %d to %d to come", i, n)
		}
		select {
		case ev := <-w.Events():
			if ev.KV.ModRevision != int64(i) {
				t.Fatalf("revision %d, want %d", ev.KV.ModRevision, i)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("event %d never came", i)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); pending() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("pending above 0 after every event was read")
		}
	}
}
