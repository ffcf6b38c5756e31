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
	for r := int64(1); r <= chanCap+100; r++ {
		if !q.push(rev(r), 1000) {
			t.Fatalf("push %d refused", r)
		}
	}
	if !q.isPumping() {
		t.Fatalf("%d events in a channel of %d and no pump", chanCap+100, chanCap)
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
	const limit = chanCap + 100
	q := newQueue(limit)
	defer q.drop()
	for r := int64(1); r <= limit; r++ {
		if !q.push(rev(r), limit) {
			t.Fatalf("push %d of %d refused", r, limit)
		}
	}
	waitInHand(t, q)
	if q.push(rev(limit+1), limit) {
		t.Errorf("event %d was taken by a queue of %d", limit+1, limit)
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

// waitInHand waits until q's pump has the first event of the overflow in
// hand (blocked on a channel nobody reads).
func waitInHand(t *testing.T, q *queue) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		q.mu.Lock()
		inHand := q.inHand
		q.mu.Unlock()
		if inHand {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the pump never took an event in hand")
		}
	}
}

func (q *queue) isPumping() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pumping
}

// TestPendingCountsTheOverflow: with the channel empty (the reader has
// just drained it), pending counts the overflow but for the event in the
// pump's hand, which may be in the channel already: above 0 only when an
// event will come.
func TestPendingCountsTheOverflow(t *testing.T) {
	for _, tc := range []struct {
		overflow int
		inHand   bool
		want     int
	}{
		{overflow: 0, want: 0},
		{overflow: 1, want: 1},
		{overflow: 1, inHand: true, want: 0},
		{overflow: 2, inHand: true, want: 1},
		{overflow: 5, want: 5},
	} {
		q := &queue{ch: make(chan storage.Event, 4), inHand: tc.inHand}
		for r := range tc.overflow {
			q.overflow = append(q.overflow, rev(int64(r+1)))
		}
		if got := q.pending(); got != tc.want {
			t.Errorf("overflow %d, in hand %v: pending = %d, want %d", tc.overflow, tc.inHand, got, tc.want)
		}
	}
	q := &queue{ch: make(chan storage.Event, 4)}
	q.ch <- rev(1)
	q.overflow = []storage.Event{rev(2), rev(3)}
	if got := q.pending(); got == 0 {
		t.Error("pending = 0 with an event in the channel")
	}
}
