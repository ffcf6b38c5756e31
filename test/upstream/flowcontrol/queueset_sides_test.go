package flowcontrol

import (
	"context"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"

	fq "k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing"
	"k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing/queueset"
	testeventclock "k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing/testing/eventclock"
	"k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	fcrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"

	"github.com/admitd/admitd/internal/flowcontrol"
)

// queueingSide is one fair queuing implementation driven through a
// scenario: requests are named by the scenario's ids.
type queueingSide interface {
	// advance moves the clock to t, ending lingering seats on the way at
	// the moments they end.
	advance(t time.Time)
	// arrive starts request id; reason is why it was refused ("" when
	// it was queued or seated).
	arrive(id int, a arrival) (reason string)
	// finish ends executing request id.
	finish(id int)
	// giveUp takes waiting request id out of its queue (a time-out);
	// false when it was seated.
	giveUp(id int) bool
	// takeDispatched returns the ids seated since the last call, in the
	// order they were seated.
	takeDispatched() []int
	// reconfigure gives the queue set a new shape and limit.
	reconfigure(s shape)
}

// upstreamSide is k8s.io/apiserver's queueset on its fake event clock.
type upstreamSide struct {
	t     *testing.T
	clock *testeventclock.Fake
	qs    fq.QueueSet
	reqs  map[int]*upstreamRequest
	// queueless: without queues, what does not fit is refused at once.
	queueless bool

	mu         sync.Mutex // lingering ends on the event clock's goroutines
	dispatched []int
	leaving    int // the id giveUp is taking out, whose queue note is no dispatch
}

type upstreamRequest struct {
	req    fq.Request
	cancel context.CancelFunc
	done   bool
}

func newUpstreamSide(t *testing.T, sc *scenario, start time.Time) *upstreamSide {
	clock, _ := testeventclock.NewFake(start, 0, rand.New(rand.NewSource(1)))
	const label = "differential"
	qsc, err := queueset.NewQueueSetFactory(clock).BeginConstruction(
		fq.QueuingConfig{Name: label, DesiredNumQueues: sc.queues, QueueLengthLimit: sc.queueLengthLimit, HandSize: sc.handSize},
		metrics.RatioedGaugeVecPhasedElementPair(metrics.PriorityLevelConcurrencyGaugeVec, 1, 1, []string{label}),
		metrics.PriorityLevelExecutionSeatsGaugeVec.NewForLabelValuesSafe(0, 1, []string{label}),
		fq.NewNamedIntegrator(clock, label))
	if err != nil {
		t.Fatalf("%s: upstream BeginConstruction: %v", sc.name, err)
	}
	qs := qsc.Complete(fq.DispatchingConfig{ConcurrencyLimit: sc.limit, ConcurrencyDenominator: sc.limit})
	return &upstreamSide{t: t, clock: clock, qs: qs, reqs: map[int]*upstreamRequest{}, queueless: sc.queues == 0, leaving: -1}
}

func (u *upstreamSide) advance(t time.Time) {
	u.clock.Run(&t)
	u.clock.SetTime(t)
}

func (u *upstreamSide) arrive(id int, a arrival) string {
	ctx, cancel := context.WithCancel(context.Background())
	est := &fcrequest.WorkEstimate{InitialSeats: uint64(a.seats), FinalSeats: uint64(a.finalSeats), AdditionalLatency: a.latency}
	queued := false
	note := func(inQueue bool) {
		u.mu.Lock()
		defer u.mu.Unlock()
		if inQueue {
			queued = true
		} else if id != u.leaving {
			u.dispatched = append(u.dispatched, id)
		}
	}
	req, _ := u.qs.StartRequest(ctx, est, a.hash, "", "differential", id, nil, note)
	if req == nil {
		cancel()
		if u.queueless {
			return "concurrency-limit"
		}
		return "queue-full"
	}
	u.mu.Lock()
	if !queued { // no queues: seated at once, with no queue note
		u.dispatched = append(u.dispatched, id)
	}
	u.mu.Unlock()
	u.reqs[id] = &upstreamRequest{req: req, cancel: cancel}
	return ""
}

func (u *upstreamSide) finish(id int) {
	r := u.reqs[id]
	if r.done {
		u.t.Fatalf("upstream request %d finished twice", id)
	}
	r.done = true
	executed := false
	r.req.Finish(func() { executed = true })
	r.cancel()
	if !executed {
		u.t.Errorf("upstream request %d finished without executing", id)
	}
}

func (u *upstreamSide) giveUp(id int) bool {
	r := u.reqs[id]
	if r.done {
		u.t.Fatalf("upstream request %d gives up twice", id)
	}
	r.done = true
	u.mu.Lock()
	u.leaving = id
	u.mu.Unlock()
	r.cancel()
	executed := false
	r.req.Finish(func() { executed = true })
	u.mu.Lock()
	u.leaving = -1
	u.mu.Unlock()
	return !executed
}

func (u *upstreamSide) reconfigure(s shape) {
	qsc, err := u.qs.BeginConfigChange(fq.QueuingConfig{Name: "differential", DesiredNumQueues: s.queues, QueueLengthLimit: s.queueLengthLimit, HandSize: s.handSize})
	if err != nil {
		u.t.Fatalf("upstream BeginConfigChange(%+v): %v", s, err)
	}
	qsc.Complete(fq.DispatchingConfig{ConcurrencyLimit: s.limit, ConcurrencyDenominator: s.limit})
	u.queueless = s.queues == 0
}

func (u *upstreamSide) takeDispatched() []int {
	u.mu.Lock()
	defer u.mu.Unlock()
	d := u.dispatched
	u.dispatched = nil
	return d
}

// admitdSide is admitd's queue set on a clock of its own whose timers
// fire as the clock passes them.
type admitdSide struct {
	now        time.Time
	timers     []fakeTimer
	timerCount int
	fq         *flowcontrol.FairQueues
	reqs       map[int]*flowcontrol.FairRequest
	seen       int // the dispatch order last reported
}

type fakeTimer struct {
	at    time.Time
	order int
	f     func()
}

func newAdmitdSide(sc *scenario, start time.Time) *admitdSide {
	a := &admitdSide{now: start, reqs: map[int]*flowcontrol.FairRequest{}}
	a.fq = flowcontrol.NewFairQueues(flowcontrol.FairQueuesConfig{Queues: sc.queues, HandSize: sc.handSize,
		QueueLengthLimit: sc.queueLengthLimit, Limit: sc.limit, Now: func() time.Time { return a.now },
		AfterFunc: func(d time.Duration, f func()) {
			a.timerCount++
			a.timers = append(a.timers, fakeTimer{at: a.now.Add(d), order: a.timerCount, f: f})
		}})
	return a
}

func (a *admitdSide) reconfigure(s shape) {
	a.fq.Reconfigure(flowcontrol.FairQueuesConfig{Queues: s.queues, HandSize: s.handSize, QueueLengthLimit: s.queueLengthLimit, Limit: s.limit})
}

func (a *admitdSide) advance(t time.Time) {
	for {
		i := a.nextTimer()
		if i < 0 || a.timers[i].at.After(t) {
			break
		}
		next := a.timers[i]
		a.timers = slices.Delete(a.timers, i, i+1)
		a.now = next.at
		next.f()
	}
	a.now = t
}

// nextTimer is the index of the earliest timer, the first set among
// equals; -1 when none is set.
func (a *admitdSide) nextTimer() int {
	best := -1
	for i, tm := range a.timers {
		if best < 0 || tm.at.Before(a.timers[best].at) || tm.at.Equal(a.timers[best].at) && tm.order < a.timers[best].order {
			best = i
		}
	}
	return best
}

func (a *admitdSide) arrive(id int, ar arrival) string {
	r, reason := a.fq.Start(flowcontrol.Estimate{Seats: ar.seats, FinalSeats: ar.finalSeats, AdditionalLatency: ar.latency}, ar.hash)
	if r != nil {
		a.reqs[id] = r
	}
	return reason
}

func (a *admitdSide) finish(id int) { a.reqs[id].Finish() }

func (a *admitdSide) giveUp(id int) bool { return a.reqs[id].GiveUp() }

func (a *admitdSide) takeDispatched() []int {
	type seated struct{ id, order int }
	var got []seated
	for id, r := range a.reqs {
		if o := r.Dispatched(); o > a.seen {
			got = append(got, seated{id, o})
		}
	}
	slices.SortFunc(got, func(x, y seated) int { return x.order - y.order })
	ids := make([]int, len(got))
	for i, s := range got {
		ids[i] = s.id
		a.seen = s.order
	}
	return ids
}
