package fanout

import (
	"sync"

	"github.com/admitd/admitd/pkg/storage"
)

// chanCap is the capacity of a watcher's channel. The events a watcher may
// lag behind beyond it (up to the Hub's bufSize) wait in a slice that grows
// only while the watcher lags, so that an idle watcher costs ~18 KiB rather
// than bufSize events (74 KiB at the default 1,024). 256 events hold the
// bursts of heavy fan-out without the overflow: 1,000 watchers of a stream
// of creates on 2 cores, the watchers' reader on the same cores, lag past
// 64 events often enough that with 64 the pumps cost ~5% more CPU a create;
// with 256, what a full 1,024-event channel cost. (The overflow holds
// copies: a pointer into the published batch would keep the whole batch,
// every prefix's events, alive for as long as a watcher of a quiet prefix
// lags.)
const chanCap = 256

// queue is a watcher's events on their way to its reader: the channel the
// reader receives from, and, when the channel is full, an overflow that a
// goroutine of its own (the pump, started then, ending when the overflow is
// empty) moves into the channel in order. While the pump runs every new
// event joins the overflow, so that none overtakes another.
type queue struct {
	ch chan storage.Event

	mu       sync.Mutex
	overflow []storage.Event
	pumping  bool
	inHand   bool // the pump is sending overflow[0]
	dropped  bool
	// quit ends a pump blocked on a reader that stopped reading; made
	// with the first pump, closed when the queue is dropped
	quit chan struct{}
}

func newQueue(bufSize int) *queue {
	return &queue{ch: make(chan storage.Event, min(bufSize, chanCap))}
}

// push queues ev unless the queue already holds limit events (the reader
// lags too far); it never blocks. The event the pump has just sent counts
// twice until the pump next takes the lock, so a queue may refuse at
// limit-1 for that moment, never above limit.
func (q *queue) push(ev storage.Event, limit int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.pumping {
		select {
		case q.ch <- ev:
			return true
		default:
		}
	}
	if len(q.ch)+len(q.overflow) >= limit {
		return false
	}
	q.overflow = append(q.overflow, ev)
	if !q.pumping {
		q.pumping = true
		if q.quit == nil {
			q.quit = make(chan struct{})
		}
		go q.pump()
	}
	return true
}

// drop ends the queue: the reader gets what the channel holds, then sees it
// closed; what waits in the overflow is discarded.
func (q *queue) drop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dropped {
		return
	}
	q.dropped = true
	q.overflow = nil
	q.inHand = false
	if q.pumping {
		close(q.quit) // the pump closes ch: it may be sending on it
		return
	}
	close(q.ch)
}

// pump moves the overflow into the channel until it is empty or the queue
// is dropped. The event it sends stays first in the overflow, in hand,
// until the send is done (it counts against the limit until the channel
// has it), and is removed when the pump next holds the lock: one lock a
// send.
func (q *queue) pump() {
	for {
		q.mu.Lock()
		if !q.dropped {
			if q.inHand {
				q.popLocked()
				q.inHand = false
			}
			q.moveLocked()
		}
		if q.dropped || len(q.overflow) == 0 {
			q.stopPumpLocked()
			q.mu.Unlock()
			return
		}
		ev := q.overflow[0] // only the pump removes it; push appends behind
		q.inHand = true
		q.mu.Unlock()
		select {
		case q.ch <- ev:
		case <-q.quit:
			q.mu.Lock()
			q.stopPumpLocked()
			q.mu.Unlock()
			return
		}
	}
}

// pending tells whether events wait for the reader, and at most how many:
// what the channel holds when it holds any, else the overflow but for the
// event in the pump's hand (it may be in the channel already). Above 0, an
// event will come; 0 with the last one on its way is possible.
func (q *queue) pending() int {
	if n := len(q.ch); n > 0 {
		return n
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.ch) + len(q.overflow)
	if q.inHand {
		n--
	}
	return n
}

// moveLocked moves into the channel what fits without blocking.
func (q *queue) moveLocked() {
	for len(q.overflow) > 0 {
		select {
		case q.ch <- q.overflow[0]:
			q.popLocked()
		default:
			return
		}
	}
}

func (q *queue) popLocked() {
	q.overflow[0] = storage.Event{}
	q.overflow = q.overflow[1:]
}

// stopPumpLocked ends the pump: it closes the channel of a dropped queue
// (drop left that to it) and lets go of the overflow's array.
func (q *queue) stopPumpLocked() {
	q.pumping = false
	q.inHand = false
	q.overflow = nil
	if q.dropped {
		close(q.ch)
	}
}
