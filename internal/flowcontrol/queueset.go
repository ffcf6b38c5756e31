package flowcontrol

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// estimatedServiceTime is the service time fair queuing charges a request
// when it is dispatched (upstream's 3 ms); the difference from the time it
// really took is settled when it finishes.
const estimatedServiceTime = 3 * time.Millisecond

// Rejection reasons, as upstream's rejected-requests metric names them.
const (
	rejectQueueFull        = "queue-full"
	rejectConcurrencyLimit = "concurrency-limit"
	rejectTimeout          = "time-out"
	rejectCancelled        = "cancelled"
)

// queueSet holds the seats of one limited priority level and the queues of
// requests waiting for them. Requests of one flow land, by shuffle
// sharding, in the shortest of a few queues of their own hand; queues are
// served by fair queuing in virtual time (seat-seconds), so a busy flow
// cannot take another's share.
type queueSet struct {
	mu  sync.Mutex
	now func() time.Time

	queues           []*queue // empty: the level refuses what it cannot seat
	handSize         int
	queueLengthLimit int
	limit            int // seats this level may use now

	seatsInUse   int
	executing    int
	waiting      int
	waitingSeats int
	// virtualTime advances, per active queue, at the rate seats are
	// served; lastSync is when it was last brought up to date.
	virtualTime  float64
	lastSync     time.Time
	activeQueues int
	robin        int
	enqueues     int

	demand *demandStats
	// totals for the debug dump
	dispatched, rejected, timedOut, cancelled int
}

// queue is one FIFO of a queueSet.
type queue struct {
	index        int
	waiting      list.List // of *ticket
	waitingWork  float64
	waitingSeats int
	nextDispatch float64 // virtual time its head may start
	seatsInUse   int
	executing    int
}

func (q *queue) active() bool { return q.waiting.Len() > 0 || q.executing > 0 }

// ticket is one request's place in a queueSet.
type ticket struct {
	qs         *queueSet
	q          *queue // nil when seated without queuing
	seats      int
	work       float64 // seat-seconds charged at dispatch
	arrival    float64 // virtual time of arrival
	elem       *list.Element
	dispatched chan struct{}
	executing  bool
	started    time.Time
	// flow's in-queue gauge counts the ticket while it waits.
	flow *flowMetrics
}

func newQueueSet(now func() time.Time, queues, handSize, queueLengthLimit, limit int, demand *demandStats) *queueSet {
	qs := &queueSet{now: now, handSize: handSize, queueLengthLimit: queueLengthLimit, limit: limit,
		lastSync: now(), demand: demand}
	for i := 0; i < queues; i++ {
		qs.queues = append(qs.queues, &queue{index: i})
	}
	return qs
}

// setLimit changes the seats the level may use (borrowing) and seats what
// now fits.
func (qs *queueSet) setLimit(limit int) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTime()
	qs.limit = limit
	qs.dispatchWhatFits()
}

// acquire seats a request of the flow with hash, waiting in its queue
// until it is dispatched, waitLimit passes or ctx ends. It returns the
// ticket to finish, or the reason the request was refused.
func (qs *queueSet) acquire(ctx context.Context, seats int, hash uint64, waitLimit time.Duration, flow *flowMetrics) (*ticket, string) {
	qs.mu.Lock()
	qs.syncTime()
	t := &ticket{qs: qs, seats: seats, work: float64(seats) * estimatedServiceTime.Seconds(), flow: flow}
	if len(qs.queues) == 0 {
		defer qs.mu.Unlock()
		if !qs.fits(seats) {
			qs.rejected++
			return nil, rejectConcurrencyLimit
		}
		qs.dispatched++
		qs.seat(t)
		return t, ""
	}
	q := qs.chooseQueue(hash)
	if qs.seatsInUse >= qs.limit && q.waiting.Len() >= qs.queueLengthLimit {
		qs.rejected++
		qs.mu.Unlock()
		return nil, rejectQueueFull
	}
	t.dispatched = make(chan struct{})
	qs.enqueue(q, t)
	qs.dispatchWhatFits()
	seated := t.executing
	qs.mu.Unlock()
	if seated {
		return t, ""
	}

	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	timedOut := false
	select {
	case <-t.dispatched:
		return t, ""
	case <-timer.C:
		timedOut = true
	case <-ctx.Done():
		timedOut = ctx.Err() == context.DeadlineExceeded
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if t.executing { // dispatched meanwhile
		return t, ""
	}
	qs.syncTime()
	qs.dequeue(t)
	qs.boundNextDispatch(q)
	qs.rejected++
	if timedOut {
		qs.timedOut++
		return nil, rejectTimeout
	}
	qs.cancelled++
	return nil, rejectCancelled
}

// finish gives back a ticket's seats and dispatches what then fits; the
// caller makes sure it runs once.
func (t *ticket) finish() {
	qs := t.qs
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTime()
	qs.executing--
	qs.seatsInUse -= t.seats
	if q := t.q; q != nil {
		wasActive := q.active()
		q.executing--
		q.seatsInUse -= t.seats
		// Settle the charge: the estimate against the time it took.
		took := qs.now().Sub(t.started).Seconds()
		q.nextDispatch -= float64(t.seats) * (estimatedServiceTime.Seconds() - took)
		qs.boundNextDispatch(q)
		qs.noteActivity(q, wasActive)
	}
	qs.noteDemand()
	qs.dispatchWhatFits()
}

// chooseQueue deals the flow's hand and takes the queue with the least
// work waiting, starting the comparison at a rotating offset.
func (qs *queueSet) chooseQueue(hash uint64) *queue {
	var buf [maxHandSize]int
	hand := buf[:qs.handSize]
	DealHand(hash, len(qs.queues), hand)
	offset := qs.enqueues % len(hand)
	qs.enqueues++
	var best *queue
	for i := range hand {
		q := qs.queues[hand[(offset+i)%len(hand)]]
		if best == nil || q.waitingWork < best.waitingWork {
			best = q
		}
	}
	return best
}

func (qs *queueSet) enqueue(q *queue, t *ticket) {
	wasActive := q.active()
	if !wasActive {
		q.nextDispatch = qs.virtualTime
	}
	t.q, t.arrival = q, qs.virtualTime
	t.elem = q.waiting.PushBack(t)
	q.waitingWork += t.work
	q.waitingSeats += t.seats
	qs.waiting++
	qs.waitingSeats += t.seats
	t.flow.queued(1)
	qs.noteActivity(q, wasActive)
	qs.boundNextDispatch(q)
	qs.noteDemand()
}

func (qs *queueSet) dequeue(t *ticket) {
	q := t.q
	wasActive := q.active()
	q.waiting.Remove(t.elem)
	q.waitingWork -= t.work
	q.waitingSeats -= t.seats
	qs.waiting--
	qs.waitingSeats -= t.seats
	t.flow.queued(-1)
	qs.noteActivity(q, wasActive)
	qs.noteDemand()
}

// fits: seats can start now. A request wider than the whole limit starts
// alone.
func (qs *queueSet) fits(seats int) bool {
	if seats > qs.limit {
		return qs.executing == 0
	}
	return qs.seatsInUse+seats <= qs.limit
}

// seat starts t.
func (qs *queueSet) seat(t *ticket) {
	t.executing, t.started = true, qs.now()
	qs.executing++
	qs.seatsInUse += t.seats
	qs.noteDemand()
}

// dispatchWhatFits starts queued requests, the queue whose head would
// finish first in virtual time first, while they fit.
func (qs *queueSet) dispatchWhatFits() {
	for qs.waiting > 0 && qs.seatsInUse < qs.limit && qs.dispatchOne() {
	}
}

func (qs *queueSet) dispatchOne() bool {
	var best *queue
	var bestFinish float64
	bestIndex := 0
	n := len(qs.queues)
	for range qs.queues {
		qs.robin = (qs.robin + 1) % n
		q := qs.queues[qs.robin]
		front := q.waiting.Front()
		if front == nil {
			continue
		}
		finish := q.nextDispatch + front.Value.(*ticket).work
		if best == nil || finish < bestFinish {
			best, bestFinish, bestIndex = q, finish, qs.robin
		}
	}
	if best == nil {
		return false
	}
	t := best.waiting.Front().Value.(*ticket)
	if !qs.fits(t.seats) {
		return false
	}
	qs.robin = bestIndex
	qs.dispatched++
	qs.dequeue(t)
	wasActive := best.active()
	best.executing++
	best.seatsInUse += t.seats
	best.nextDispatch += t.work
	qs.noteActivity(best, wasActive)
	qs.seat(t)
	qs.boundNextDispatch(best)
	close(t.dispatched)
	return true
}

// boundNextDispatch keeps a queue from starting its head before the head
// arrived (in virtual time): an idle spell earns no credit.
func (qs *queueSet) boundNextDispatch(q *queue) {
	front := q.waiting.Front()
	if front == nil {
		return
	}
	if arrival := front.Value.(*ticket).arrival; q.nextDispatch < arrival {
		q.nextDispatch = arrival
	}
}

func (qs *queueSet) noteActivity(q *queue, wasActive bool) {
	switch isActive := q.active(); {
	case isActive && !wasActive:
		qs.activeQueues++
	case !isActive && wasActive:
		qs.activeQueues--
	}
}

// syncTime advances virtual time to now: each active queue is served at
// min(seats asked, limit) / active queues seats per second.
func (qs *queueSet) syncTime() {
	now := qs.now()
	elapsed := now.Sub(qs.lastSync).Seconds()
	qs.lastSync = now
	if qs.activeQueues == 0 || elapsed <= 0 {
		return
	}
	asked := float64(min(qs.seatsInUse+qs.waitingSeats, qs.limit))
	qs.virtualTime += elapsed * asked / float64(qs.activeQueues)
}

func (qs *queueSet) noteDemand() {
	if qs.demand != nil {
		qs.demand.set(qs.now(), qs.seatsInUse+qs.waitingSeats)
	}
}

// queueSetDump is a queueSet's state for the debug dumps.
type queueSetDump struct {
	waiting, executing                        int
	dispatched, rejected, timedOut, cancelled int
	queues                                    []queueDump
}

type queueDump struct {
	waiting, executing, seatsInUse int
	nextDispatch, waitingWork      float64
	waitingSeats                   int
}

func (qs *queueSet) dump() queueSetDump {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTime()
	d := queueSetDump{waiting: qs.waiting, executing: qs.executing, dispatched: qs.dispatched, rejected: qs.rejected,
		timedOut: qs.timedOut, cancelled: qs.cancelled}
	for _, q := range qs.queues {
		d.queues = append(d.queues, queueDump{waiting: q.waiting.Len(), executing: q.executing, seatsInUse: q.seatsInUse,
			nextDispatch: q.nextDispatch, waitingWork: q.waitingWork, waitingSeats: q.waitingSeats})
	}
	return d
}
