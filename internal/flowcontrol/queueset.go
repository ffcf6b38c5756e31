package flowcontrol

import (
	"container/list"
	"context"
	"slices"
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
	// afterFunc runs f once d has passed: it ends a lingering request's
	// final seats (time.AfterFunc; the differential test's fake clock).
	afterFunc func(d time.Duration, f func())

	// queues are dealt from the first desired; the others, left from a
	// configuration with more, go once they empty. desired 0: the level
	// refuses what it cannot seat.
	queues           []*queue
	desired          int
	handSize         int
	queueLengthLimit int
	limit            int // seats this level may use now

	seatsInUse int
	// queuedSeats are the seats in use by requests dispatched from a
	// queue (not those seated while the level had no queues).
	queuedSeats  int
	executing    int
	waiting      int
	waitingSeats int
	// virtualTime advances, per active queue, at the rate seats are
	// served; lastSync is when it was last brought up to date.
	virtualTime  seatSeconds
	lastSync     time.Time
	activeQueues int
	robin        int
	enqueues     int

	demand *demandStats
	series *levelSeries
	// queueless holds the requests seated without a queue (a level that
	// refuses what it cannot seat), for the request dump.
	queueless list.List
	// totals for the debug dump
	dispatched, rejected, timedOut, cancelled int
}

// queue is one FIFO of a queueSet.
type queue struct {
	index        int
	waiting      list.List // of *ticket
	waitingWork  seatSeconds
	waitingSeats int
	nextDispatch seatSeconds // virtual time its head may start
	seatsInUse   int
	executing    int
	running      list.List // of *ticket, for the request dump
}

func (q *queue) active() bool { return q.waiting.Len() > 0 || q.executing > 0 }

// ticket is one request's place in a queueSet.
type ticket struct {
	qs    *queueSet
	q     *queue // nil when seated without queuing
	seats int    // while it runs
	// finalSeats stay taken for linger once it has finished (the watch
	// events a write sends); held is the larger of the two, what it
	// occupies from dispatch until the linger ends.
	finalSeats int
	linger     time.Duration
	held       int
	work       seatSeconds // charged at dispatch
	arrival    seatSeconds // virtual time of arrival
	elem       *list.Element
	who        requestDesc
	arrived    time.Time
	dispatched chan struct{}
	executing  bool
	started    time.Time
	// dispatchOrder numbers the tickets in the order they were seated.
	dispatchOrder int
	// flow's in-queue gauge counts the ticket while it waits.
	flow *flowMetrics
}

func newQueueSet(now func() time.Time, queues, handSize, queueLengthLimit, limit int, demand *demandStats) *queueSet {
	qs := &queueSet{now: now, afterFunc: afterRealTime, limit: limit, lastSync: now(), demand: demand}
	qs.reshape(queues, handSize, queueLengthLimit)
	return qs
}

// reconfigure gives the queue set a new shape and limit, as upstream's
// setConfiguration: queues are added at once, and the ones beyond the new
// number go as they empty; with no queues, the queue length limit and hand
// size stay as they were. Waiting requests keep their places.
func (qs *queueSet) reconfigure(queues, handSize, queueLengthLimit, limit int) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTime()
	qs.reshape(queues, handSize, queueLengthLimit)
	qs.limit = limit
	qs.noteDemand()
	qs.dispatchWhatFits()
}

func (qs *queueSet) reshape(queues, handSize, queueLengthLimit int) {
	qs.desired = queues
	if queues == 0 {
		return
	}
	for i := len(qs.queues); i < queues; i++ {
		qs.queues = append(qs.queues, &queue{index: i})
	}
	qs.handSize, qs.queueLengthLimit = handSize, queueLengthLimit
}

// dropIfSurplus removes q once nothing waits or executes in it when there
// are more queues than desired (upstream removes one when a request's
// seats are released).
func (qs *queueSet) dropIfSurplus(q *queue) {
	if q == nil || len(qs.queues) <= qs.desired || q.waiting.Len() > 0 || q.executing > 0 || q.index >= len(qs.queues) || qs.queues[q.index] != q {
		return
	}
	qs.queues = slices.Delete(qs.queues, q.index, q.index+1)
	for i := q.index; i < len(qs.queues); i++ {
		qs.queues[i].index = i
	}
	if qs.robin >= q.index {
		qs.robin--
	}
}

func afterRealTime(d time.Duration, f func()) { time.AfterFunc(d, f) }

// setLimit changes the seats the level may use (borrowing) and seats what
// now fits.
func (qs *queueSet) setLimit(limit int) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTime()
	qs.limit = limit
	qs.noteDemand()
	qs.dispatchWhatFits()
}

// acquire seats a request of the flow with hash, waiting in its queue
// until it is dispatched, waitLimit passes or ctx ends. It returns the
// ticket to finish, or the reason the request was refused.
func (qs *queueSet) acquire(ctx context.Context, est Estimate, hash uint64, waitLimit time.Duration, flow *flowMetrics, who requestDesc) (*ticket, string) {
	t, seated, reason := qs.start(est, hash, flow, who)
	if t == nil || seated {
		return t, reason
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
	if reason, left := qs.leave(t, timedOut); left {
		return nil, reason
	}
	return t, "" // dispatched meanwhile
}

// start queues a request and seats what fits, without waiting: it returns
// the ticket and whether it is seated, or the reason it was refused.
func (qs *queueSet) start(est Estimate, hash uint64, flow *flowMetrics, who requestDesc) (t *ticket, seated bool, reason string) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTime()
	t = newTicket(qs, est, flow)
	t.who, t.arrived = who, qs.now()
	if qs.desired == 0 {
		if !qs.fits(t.held) {
			qs.rejected++
			return nil, false, rejectConcurrencyLimit
		}
		qs.dispatched++
		t.dispatchOrder = qs.dispatched
		qs.seat(t)
		return t, true, ""
	}
	q := qs.chooseQueue(hash)
	if qs.seatsInUse >= qs.limit && q.waiting.Len() >= qs.queueLengthLimit {
		qs.rejected++
		return nil, false, rejectQueueFull
	}
	t.dispatched = make(chan struct{})
	qs.enqueue(q, t)
	flow.queueLength(q.waiting.Len())
	qs.dispatchWhatFits()
	return t, t.executing, ""
}

// leave takes a waiting ticket out of its queue, refused as timed out or
// cancelled; left is false when it was seated meanwhile.
func (qs *queueSet) leave(t *ticket, timedOut bool) (reason string, left bool) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if t.executing {
		return "", false
	}
	qs.syncTime()
	qs.dequeue(t)
	qs.boundNextDispatch(t.q)
	qs.rejected++
	if timedOut {
		qs.timedOut++
		return rejectTimeout, true
	}
	qs.cancelled++
	return rejectCancelled, true
}

func newTicket(qs *queueSet, est Estimate, flow *flowMetrics) *ticket {
	t := &ticket{qs: qs, seats: est.Seats, finalSeats: est.FinalSeats, linger: max(0, est.AdditionalLatency), flow: flow}
	// Final seats without a linger still count while it executes, as
	// upstream's MaxSeats; they are released with the others.
	t.held = max(t.seats, t.finalSeats)
	t.work = seatsFor(float64(t.seats), estimatedServiceTime) + t.finalWork()
	return t
}

// finalWork is the work a ticket holds after it finished.
func (t *ticket) finalWork() seatSeconds { return seatsFor(float64(t.finalSeats), t.linger) }

// fitFinalSeats narrows final seats wider than the level's limit to it,
// lingering longer for the same work (as upstream).
func (t *ticket) fitFinalSeats(limit int) {
	if t.finalSeats <= limit || limit <= 0 {
		return
	}
	work := t.finalWork()
	t.finalSeats = limit
	t.linger = work.perSeat(float64(limit))
	t.held = max(t.seats, t.finalSeats)
}

// finish ends a ticket's execution; its seats go back now or, when it
// lingers, once its linger has passed, and what then fits is dispatched.
// The caller makes sure it runs once.
func (t *ticket) finish() {
	qs := t.qs
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTime()
	qs.executing--
	qs.noteDemand()
	t.running().Remove(t.elem)
	if q := t.q; q != nil {
		wasActive := q.active()
		q.executing--
		// Settle the charge: the estimate against the time it took.
		took := qs.now().Sub(t.started)
		q.nextDispatch -= seatsFor(float64(t.seats), estimatedServiceTime-took)
		qs.boundNextDispatch(q)
		qs.noteActivity(q, wasActive)
	}
	if t.linger > 0 {
		// Its seats stay taken, but a request wider than the level
		// waits only for nothing to execute.
		qs.afterFunc(t.linger, t.releaseLingering)
		qs.dispatchWhatFits()
		return
	}
	t.releaseSeatsLocked()
}

func (t *ticket) releaseLingering() {
	t.qs.mu.Lock()
	defer t.qs.mu.Unlock()
	t.qs.syncTime()
	t.releaseSeatsLocked()
}

func (t *ticket) releaseSeatsLocked() {
	qs := t.qs
	qs.seatsInUse -= t.held
	if t.q != nil {
		t.q.seatsInUse -= t.held
		qs.queuedSeats -= t.held
	}
	t.flow.seatsReleased(t.held)
	qs.noteDemand()
	qs.dropIfSurplus(t.q)
	qs.dispatchWhatFits()
}

// chooseQueue deals the flow's hand and takes the queue with the least
// work waiting, starting the comparison at a rotating offset.
func (qs *queueSet) chooseQueue(hash uint64) *queue {
	var buf [maxHandSize]int
	hand := buf[:qs.handSize]
	DealHand(hash, qs.desired, hand)
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
	q.waitingSeats += t.held
	qs.waiting++
	qs.waitingSeats += t.held
	t.flow.queued(1, t.held)
	t.flow.requestsWaiting(t.who.digest.Verb, 1)
	qs.noteActivity(q, wasActive)
	qs.boundNextDispatch(q)
	qs.noteDemand()
}

func (qs *queueSet) dequeue(t *ticket) {
	q := t.q
	wasActive := q.active()
	q.waiting.Remove(t.elem)
	q.waitingWork -= t.work
	q.waitingSeats -= t.held
	qs.waiting--
	qs.waitingSeats -= t.held
	t.flow.queued(-1, -t.held)
	t.flow.requestsWaiting(t.who.digest.Verb, -1)
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

// running is the list of executing requests t is in.
func (t *ticket) running() *list.List {
	if t.q != nil {
		return &t.q.running
	}
	return &t.qs.queueless
}

// seat starts t.
func (qs *queueSet) seat(t *ticket) {
	t.executing, t.started = true, qs.now()
	t.elem = t.running().PushBack(t)
	qs.executing++
	qs.seatsInUse += t.held
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
	var bestFinish seatSeconds
	bestIndex := 0
	n := len(qs.queues)
	next, discounted := [2]seatSeconds{^seatSeconds(0), 0}, [2]seatSeconds{^seatSeconds(0), 0}
	for range qs.queues {
		qs.robin = (qs.robin + 1) % n
		q := qs.queues[qs.robin]
		front := q.waiting.Front()
		if front == nil {
			continue
		}
		if qs.series != nil {
			noteBounds(&next, q.nextDispatch)
			noteBounds(&discounted, q.nextDispatch-seatsFor(float64(q.seatsInUse), estimatedServiceTime))
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
	if !qs.fits(t.held) {
		t.flow.noAccommodation()
		return false
	}
	qs.robin = bestIndex
	qs.series.noteDispatch(qs.virtualTime, best.nextDispatch, next, discounted)
	qs.dispatched++
	t.dispatchOrder = qs.dispatched
	qs.dequeue(t)
	t.fitFinalSeats(qs.limit)
	wasActive := best.active()
	best.executing++
	best.seatsInUse += t.held
	qs.queuedSeats += t.held
	best.nextDispatch += t.work
	qs.noteActivity(best, wasActive)
	qs.seat(t)
	qs.boundNextDispatch(best)
	close(t.dispatched)
	return true
}

// noteBounds widens bounds (min, max) to take in s.
func noteBounds(bounds *[2]seatSeconds, s seatSeconds) {
	bounds[0], bounds[1] = min(bounds[0], s), max(bounds[1], s)
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
	elapsed := now.Sub(qs.lastSync)
	qs.lastSync = now
	if qs.activeQueues == 0 || elapsed <= 0 {
		return
	}
	asked := float64(min(qs.queuedSeats+qs.waitingSeats, qs.limit))
	qs.virtualTime += seatsFor(asked/float64(qs.activeQueues), elapsed)
	qs.series.noteR(qs.virtualTime)
}

// idle: nothing waits, runs or lingers in qs.
func (qs *queueSet) idle() bool {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	return qs.waiting == 0 && qs.executing == 0 && qs.seatsInUse == 0
}

// noteDemand notes the seats in use and asked for in the level's demand
// statistics and its utilization series.
func (qs *queueSet) noteDemand() {
	if qs.demand != nil {
		qs.demand.set(qs.now(), qs.seatsInUse+qs.waitingSeats)
	}
	qs.series.note(utilization{seatsInUse: qs.seatsInUse, seatsAsked: qs.seatsInUse + qs.waitingSeats, executing: qs.executing,
		waiting: qs.waiting, limit: qs.limit, waitingCapacity: max(1, qs.queueLengthLimit) * max(1, qs.desired)})
}

// queueSetDump is a queueSet's state for the debug dumps.
type queueSetDump struct {
	waiting, executing                        int
	dispatched, rejected, timedOut, cancelled int
	queues                                    []queueDump
}

type queueDump struct {
	waiting, executing, seatsInUse int
	nextDispatch, waitingWork      seatSeconds
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
