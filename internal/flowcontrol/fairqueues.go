package flowcontrol

import "time"

// FairQueues is one priority level's fair queuing on its own, driven step
// by step on a clock of the caller's: the entry point of the differential
// test against upstream's queueset (test/upstream/flowcontrol). The server
// does not use it; Controller.Admit reaches the same queue set.
type FairQueues struct{ qs *queueSet }

// FairQueuesConfig shapes a FairQueues as a PriorityLevelConfiguration
// does: Queues 0 queues nothing (what does not fit is refused).
type FairQueuesConfig struct {
	Queues, HandSize, QueueLengthLimit int
	// Limit is the seats of the level.
	Limit int
	// Now is the clock.
	Now func() time.Time
	// AfterFunc runs f once d has passed on that clock; it ends the
	// lingering of final seats (time.AfterFunc when nil).
	AfterFunc func(d time.Duration, f func())
}

// NewFairQueues returns an idle FairQueues.
func NewFairQueues(c FairQueuesConfig) *FairQueues {
	qs := newQueueSet(c.Now, c.Queues, c.HandSize, c.QueueLengthLimit, c.Limit, nil)
	if c.AfterFunc != nil {
		qs.afterFunc = c.AfterFunc
	}
	return &FairQueues{qs: qs}
}

// Reconfigure changes the queues, hand size, queue length limit and limit
// of c (its clock aside) at once, as a changed PriorityLevelConfiguration
// or a borrowing adjustment does.
func (f *FairQueues) Reconfigure(c FairQueuesConfig) {
	f.qs.reconfigure(c.Queues, c.HandSize, c.QueueLengthLimit, c.Limit)
}

// FairRequest is a request started in a FairQueues.
type FairRequest struct{ t *ticket }

// Start queues a request of the flow with hash and seats what fits, without
// waiting; reason is why the request was refused ("queue-full", or
// "concurrency-limit" without queues).
func (f *FairQueues) Start(est Estimate, hash uint64) (r *FairRequest, reason string) {
	t, _, reason := f.qs.start(est, hash, nil, requestDesc{})
	if t == nil {
		return nil, reason
	}
	return &FairRequest{t: t}, ""
}

// Dispatched is the request's place in the order its FairQueues seated
// requests (1 for the first), 0 while it waits.
func (r *FairRequest) Dispatched() int {
	r.t.qs.mu.Lock()
	defer r.t.qs.mu.Unlock()
	return r.t.dispatchOrder
}

// Finish ends a seated request's execution.
func (r *FairRequest) Finish() { r.t.finish() }

// GiveUp takes a waiting request out of its queue as its time-out does;
// false when it is seated.
func (r *FairRequest) GiveUp() bool {
	_, left := r.t.qs.leave(r.t, true)
	return left
}
