package fanout

import (
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/storage"
)

// TestDroppingALaggingQueueEndsItsPump: the goroutine that moves a lagging
// queue's overflow ends when the queue is dropped though nobody reads,
// and the channel closes after what it held.
func TestDroppingALaggingQueueEndsItsPump(t *testing.T) {
	q := newQueue(1000)
	for rev := int64(1); rev <= 200; rev++ {
		if !q.push(&storage.Event{KV: storage.KeyValue{Key: "/k", ModRevision: rev}}, 1000) {
			t.Fatalf("push %d refused", rev)
		}
	}
	if !q.isPumping() {
		t.Fatal("200 events in a queue of 64 and no pump")
	}
	q.drop()
	for deadline := time.Now().Add(5 * time.Second); q.isPumping(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the pump still runs 5 s after the drop")
		}
	}
	var last int64
	for ev := range q.ch {
		if ev.KV.ModRevision != last+1 {
			t.Fatalf("revision %d after %d", ev.KV.ModRevision, last)
		}
		last = ev.KV.ModRevision
	}
	if last < chanCap || last > chanCap+1 {
		t.Errorf("read up to revision %d after the drop, want the %d the channel held (one more if the pump had it in hand)", last, chanCap)
	}
}

func (q *queue) isPumping() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pumping
}
