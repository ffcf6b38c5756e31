package tainteviction

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// schedule holds the pod deletions to come, one per pod (namespace/name),
// as upstream's timed worker queue: each waits on a timer of the clock
// and is then queued for a deletion worker, which runs it unless it was
// cancelled or replaced meanwhile (its firing then no longer matches and
// is dropped). Cancelling stops the timer. A deletion due at once is not
// cancellable: cancelling only forgets it, as upstream's runs at once in
// its own goroutine.
type schedule struct {
	queue workqueue.TypedInterface[firing]
	clock clock.WithDelayedExecution

	mu     sync.Mutex
	byPod  map[string]*deletion
	serial uint64
}

// deletion is a scheduled deletion: when it was first scheduled and when
// it runs; immediate when those are the same, else waiting on timer.
type deletion struct {
	serial    uint64
	createdAt time.Time
	fireAt    time.Time
	immediate bool
	timer     clock.Timer
}

// firing is a deletion's entry in the queue.
type firing struct {
	pod       string
	serial    uint64
	fireAt    time.Time
	immediate bool
}

// newSchedule's queue has no name: upstream has no such queue, so no
// workqueue series of it are served.
func newSchedule(clk clock.WithTickerAndDelayedExecution) *schedule {
	return &schedule{byPod: map[string]*deletion{}, clock: clk,
		queue: workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[firing]{Clock: clk})}
}

// add schedules the pod's deletion at fireAt, counted from createdAt,
// unless one is scheduled already (or running).
func (s *schedule) add(pod string, createdAt, fireAt time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byPod[pod]; ok {
		return
	}
	s.serial++
	delay := fireAt.Sub(createdAt)
	d := &deletion{serial: s.serial, createdAt: createdAt, fireAt: fireAt, immediate: delay <= 0}
	s.byPod[pod] = d
	f := firing{pod: pod, serial: d.serial, fireAt: fireAt, immediate: d.immediate}
	if d.immediate {
		s.queue.Add(f)
		return
	}
	d.timer = s.clock.AfterFunc(delay, func() { s.queue.Add(f) })
}

// createdAt is when the pod's deletion was first scheduled, if one is
// scheduled to wait (not one due at once).
func (s *schedule) createdAt(pod string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.byPod[pod]
	if d == nil || d.immediate {
		return time.Time{}, false
	}
	return d.createdAt, true
}

// immediatePending says whether the pod's deletion is one due at once,
// not yet run.
func (s *schedule) immediatePending(pod string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.byPod[pod]
	return d != nil && d.immediate
}

// cancel forgets the pod's deletion, and reports whether one that waited
// was cancelled (a "Cancelling deletion" event is due).
func (s *schedule) cancel(pod string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.byPod[pod]
	if d == nil {
		return false
	}
	delete(s.byPod, pod)
	if d.timer != nil {
		d.timer.Stop()
	}
	return !d.immediate
}

// due reports whether a firing taken from the queue is to run: an
// immediate one always, a waiting one if it is still the pod's scheduled
// deletion.
func (s *schedule) due(f firing) bool {
	if f.immediate {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.byPod[f.pod]
	return d != nil && d.serial == f.serial
}

// done forgets the pod's deletion once it has run, if it is still the one
// scheduled.
func (s *schedule) done(f firing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.byPod[f.pod]; d != nil && d.serial == f.serial {
		delete(s.byPod, f.pod)
	}
}

// scheduled is how many pod deletions are scheduled (tests).
func (s *schedule) scheduled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byPod)
}

// stop stops the timers of the deletions still waiting (the controller
// stops; they are dropped).
func (s *schedule) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for pod, d := range s.byPod {
		if d.timer != nil {
			d.timer.Stop()
		}
		delete(s.byPod, pod)
	}
}
