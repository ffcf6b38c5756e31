package fanout

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/storage"
)

func rev(r int64) storage.Event {
	return storage.Event{KV: storage.KeyValue{Key: "/k", ModRevision: r}}
}

// TestDroppingALaggingQueueEndsItsPump: the goroutine that moves a lagging
// queue's overflow ends when the queue is dropped though nobody reads,
// and the channel closes after what it held.
func TestDroppingALaggingQueueEndsItsPump(t *testing.T) {
	q := newQueue(1000)
	for r := int64(1); r <= 200; r++ {
		if !q.push(rev(r), 1000) {
			t.Fatalf("push %d refused", r)
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

// TestQueueHoldsAtMostItsLimit: nobody reads, so limit events fit and the
// next is refused, the one the pump is sending included.
func TestQueueHoldsAtMostItsLimit(t *testing.T) {
	q := newQueue(200)
	defer q.drop()
	for r := int64(1); r <= 200; r++ {
		if !q.push(rev(r), 200) {
			t.Fatalf("push %d of 200 refused", r)
		}
	}
	time.Sleep(10 * time.Millisecond) // the pump takes the first of the overflow in hand
	if q.push(rev(201), 200) {
		t.Error("a 201st event was taken by a queue of 200")
	}
}

// TestQueueUnderConcurrentReads pushes while a reader that now and then
// pauses reads, so that the pump starts and stops many times: every event
// arrives once, in order.
func TestQueueUnderConcurrentReads(t *testing.T) {
	const n = 50000
	q := newQueue(n)
	done := make(chan int64)
	go func() {
		var last int64
		for ev := range q.ch {
			if ev.KV.ModRevision != last+1 {
				t.Errorf("revision %d after %d", ev.KV.ModRevision, last)
			}
			last = ev.KV.ModRevision
			if rand.IntN(5000) == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		done <- last
	}()
	sawPump := false
	for r := int64(1); r <= n; r++ {
		if !q.push(rev(r), n) {
			t.Fatalf("push %d refused", r)
		}
		sawPump = sawPump || q.isPumping()
		if rand.IntN(2000) == 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		q.mu.Lock()
		idle := !q.pumping && len(q.ch) == 0
		q.mu.Unlock()
		if idle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the events were not all read within 10 s")
		}
	}
	q.drop()
	if last := <-done; last != n {
		t.Errorf("read up to %d, want %d", last, n)
	}
	if !sawPump {
		t.Error("the overflow was never used: nothing tested")
	}
}

func (q *queue) isPumping() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pumping
}
