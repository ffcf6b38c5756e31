package flowcontrol

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestDealHandDealsDistinctCards(t *testing.T) {
	hand := make([]int, 6)
	for hash := uint64(0); hash < 20000; hash += 7 {
		DealHand(hash*0x9e3779b97f4a7c15, 128, hand)
		seen := map[int]bool{}
		for _, c := range hand {
			if c < 0 || c >= 128 || seen[c] {
				t.Fatalf("hash %d dealt %v", hash, hand)
			}
			seen[c] = true
		}
	}
	// mixed radix: 5 = 1×4 + 1 (digits 1, 1) → cards 1, then 2
	two := make([]int, 2)
	DealHand(5, 4, two)
	if !slices.Equal(two, []int{1, 2}) {
		t.Errorf("DealHand(5, 4) = %v, want [1 2]", two)
	}
}

// waitQueued waits until qs holds n waiting requests.
func waitQueued(t *testing.T, qs *queueSet, n int) {
	t.Helper()
	for i := 0; ; i++ {
		qs.mu.Lock()
		w := qs.waiting
		qs.mu.Unlock()
		if w == n {
			return
		}
		if i > 5000 {
			t.Fatalf("%d waiting, want %d", w, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFairQueuingInterleavesFlows: with one seat, a flow that queued ten
// requests first does not make a second flow's request wait behind all of
// them: the second flow is served as soon as the first flow's queue has
// had its turn.
func TestFairQueuingInterleavesFlows(t *testing.T) {
	qs := newQueueSet(time.Now, 8, 1, 50, 1, nil)
	hold, _ := qs.acquire(context.Background(), seats(1), 0, time.Minute, nil, requestDesc{})
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	start := func(flow string, hash uint64) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk, reason := qs.acquire(context.Background(), seats(1), hash, time.Minute, nil, requestDesc{})
			if tk == nil {
				t.Errorf("%s refused: %s", flow, reason)
				return
			}
			mu.Lock()
			order = append(order, flow)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			tk.finish()
		}()
	}
	heavy, light := uint64(0), uint64(1) // hand size 1: queues 0 and 1
	for i := 0; i < 10; i++ {
		start("heavy", heavy)
	}
	waitQueued(t, qs, 10)
	start("light", light)
	waitQueued(t, qs, 11)
	hold.finish()
	wg.Wait()
	if i := slices.Index(order, "light"); i < 0 || i > 2 {
		t.Errorf("the light flow was served %dth: %v", i+1, order)
	}
}

func TestQueueFullAndTimeout(t *testing.T) {
	qs := newQueueSet(time.Now, 1, 1, 2, 1, nil)
	hold, _ := qs.acquire(context.Background(), seats(1), 0, time.Minute, nil, requestDesc{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	results := make(chan string, 2)
	for i := 0; i < 2; i++ {
		go func() {
			tk, reason := qs.acquire(ctx, seats(1), 0, time.Minute, nil, requestDesc{})
			if tk != nil {
				tk.finish()
				reason = "served"
			}
			results <- reason
		}()
	}
	waitQueued(t, qs, 2)
	if tk, reason := qs.acquire(context.Background(), seats(1), 0, time.Minute, nil, requestDesc{}); tk != nil || reason != rejectQueueFull {
		t.Errorf("third while two wait: %v %q, want %q", tk, reason, rejectQueueFull)
	}
	cancel()
	for i := 0; i < 2; i++ {
		if r := <-results; r != rejectCancelled {
			t.Errorf("a cancelled waiter: %q", r)
		}
	}
	if tk, reason := qs.acquire(context.Background(), seats(1), 0, 20*time.Millisecond, nil, requestDesc{}); tk != nil || reason != rejectTimeout {
		t.Errorf("a waiter past its deadline: %v %q", tk, reason)
	}
	hold.finish()
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if qs.waiting != 0 || qs.seatsInUse != 0 || qs.executing != 0 || qs.activeQueues != 0 {
		t.Errorf("not idle after all left: waiting %d seats %d executing %d active %d", qs.waiting, qs.seatsInUse, qs.executing, qs.activeQueues)
	}
}

// TestWideRequestRunsAlone: a request wider than the limit starts when
// nothing else runs.
func TestWideRequestRunsAlone(t *testing.T) {
	qs := newQueueSet(time.Now, 4, 2, 10, 5, nil)
	wide, _ := qs.acquire(context.Background(), seats(20), 3, time.Minute, nil, requestDesc{})
	if wide == nil {
		t.Fatal("a wide request on an idle level waits")
	}
	got := make(chan *ticket)
	go func() {
		tk, _ := qs.acquire(context.Background(), seats(1), 9, time.Minute, nil, requestDesc{})
		got <- tk
	}()
	waitQueued(t, qs, 1)
	wide.finish()
	if tk := <-got; tk == nil {
		t.Fatal("not served after the wide one")
	} else {
		tk.finish()
	}
}

func TestRetryAfterGrowsUnderRefusals(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := newDroppedTracker(func() time.Time { return now })
	if tr.retryAfter("x") != 1 {
		t.Fatal("initial Retry-After is not 1")
	}
	for s := 0; s < 4; s++ {
		for i := 0; i < 10; i++ {
			tr.record("x")
		}
		now = now.Add(time.Second)
	}
	tr.record("x")
	if got := tr.retryAfter("x"); got < 2 {
		t.Errorf("after 10 refusals a second: Retry-After %d", got)
	}
	for s := 0; s < 40; s++ {
		now = now.Add(3 * time.Second)
		tr.record("x")
	}
	if got := tr.retryAfter("x"); got != 1 {
		t.Errorf("after a refusal every 3 s for 2 minutes: Retry-After %d, want 1", got)
	}
}

// TestBorrowing: a level whose demand exceeds its nominal limit borrows
// from idle levels.
func TestBorrowing(t *testing.T) {
	now := time.Unix(0, 0)
	c := bootstrapController(t, func() time.Time { return now })
	low := c.levels["global-default"]
	low.demand.set(now, 400)
	now = now.Add(borrowingPeriod)
	c.mu.Lock()
	c.adjustBorrowing(true)
	c.mu.Unlock()
	if low.current <= low.nominal {
		t.Errorf("global-default under demand 400: limit %d, nominal %d", low.current, low.nominal)
	}
	total := 0
	for _, l := range c.levels {
		total += l.current
	}
	if total > 602 {
		t.Errorf("levels hold %d seats, more than the server's", total)
	}
}

func seats(n int) Estimate { return Estimate{Seats: n} }

// TestWriteLingersOnItsFinalSeats: a write whose events go to many
// watchers keeps its final seats for its additional latency after it
// finished, so the next request waits that long; final seats wider than
// the level are narrowed to it for longer, the same seat-seconds.
func TestWriteLingersOnItsFinalSeats(t *testing.T) {
	qs := newQueueSet(time.Now, 4, 2, 10, 4, nil)
	write, _ := qs.acquire(context.Background(), Estimate{Seats: 1, FinalSeats: 8, AdditionalLatency: 100 * time.Millisecond}, 3, time.Minute, nil, requestDesc{})
	if write == nil {
		t.Fatal("the write waits on an idle level")
	}
	if write.held != 4 || write.finalSeats != 4 || write.linger != 200*time.Millisecond {
		t.Fatalf("narrowed to held %d final %d linger %v, want 4, 4 and 200ms", write.held, write.finalSeats, write.linger)
	}
	got := make(chan time.Time)
	go func() {
		tk, _ := qs.acquire(context.Background(), seats(1), 9, time.Minute, nil, requestDesc{})
		got <- time.Now()
		tk.finish()
	}()
	waitQueued(t, qs, 1)
	finished := time.Now()
	write.finish()
	if waited := (<-got).Sub(finished); waited < 150*time.Millisecond {
		t.Errorf("the next request started %v after the write finished, want its linger (200ms)", waited)
	}
	time.Sleep(10 * time.Millisecond)
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if qs.seatsInUse != 0 || qs.executing != 0 {
		t.Errorf("after both: %d seats in use, %d executing", qs.seatsInUse, qs.executing)
	}
}

// fakeClock is a clock for a queue set that moves only when told, with
// the timers (lingering) it runs once their time has come.
type fakeClock struct {
	now    time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	f  func()
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) AfterFunc(d time.Duration, f func()) {
	c.timers = append(c.timers, fakeTimer{at: c.now.Add(d), f: f})
}

// advance moves the clock by d, running the timers due on the way.
func (c *fakeClock) advance(d time.Duration) {
	c.now = c.now.Add(d)
	for i := 0; i < len(c.timers); {
		if tm := c.timers[i]; !tm.at.After(c.now) {
			c.timers = slices.Delete(c.timers, i, i+1)
			tm.f()
			continue
		}
		i++
	}
}

func newFakeQueueSet(queues, handSize, limit int) (*queueSet, *fakeClock) {
	c := &fakeClock{now: time.Unix(1000, 0)}
	qs := newQueueSet(c.Now, queues, handSize, 50, limit, nil)
	qs.afterFunc = c.AfterFunc
	return qs, c
}

// startSeated starts a request that must be seated at once.
func startSeated(t *testing.T, qs *queueSet, est Estimate, hash uint64) *ticket {
	t.Helper()
	tk, seated, reason := qs.start(est, hash, nil, requestDesc{})
	if !seated {
		t.Fatalf("%+v of flow %d waits (%q)", est, hash, reason)
	}
	return tk
}

// TestFinalSeatsWithoutLingerHeld: final seats with no additional latency
// are held while the request executes (upstream's MaxSeats), so a
// request they leave no room for waits; they go back when it finishes.
func TestFinalSeatsWithoutLingerHeld(t *testing.T) {
	qs, _ := newFakeQueueSet(1, 1, 4)
	write := startSeated(t, qs, Estimate{Seats: 1, FinalSeats: 3}, 0)
	next, seated, _ := qs.start(seats(2), 0, nil, requestDesc{})
	if seated {
		t.Fatal("a 2-seat request seated beside 3 final seats on a 4-seat level")
	}
	write.finish()
	if !next.executing {
		t.Error("the 2-seat request still waits after the write finished")
	}
}

// TestWideRequestStartsWhileSeatsLinger: a request wider than the level
// waits only for nothing to execute, so it starts when the last executing
// request finishes even though that one's final seats still linger (as
// upstream dispatches after every finish).
func TestWideRequestStartsWhileSeatsLinger(t *testing.T) {
	qs, clock := newFakeQueueSet(4, 2, 4)
	write := startSeated(t, qs, Estimate{Seats: 1, FinalSeats: 2, AdditionalLatency: time.Second}, 3)
	wide, seated, _ := qs.start(seats(6), 9, nil, requestDesc{})
	if seated {
		t.Fatal("a 6-seat request seated beside an executing one on a 4-seat level")
	}
	clock.advance(time.Millisecond)
	write.finish()
	if !wide.executing {
		t.Error("the wide request waits for the write's linger though nothing executes")
	}
}

// TestEqualWorkTiesAsUpstream: work is counted in upstream's integer
// units (1e-8 seat-seconds), so six one-seat requests charge their queue
// exactly what one six-seat request charges another; the two queues' next
// requests then finish at the same virtual time, and the tie goes to the
// queue after the one served last (round robin). Summed as float seconds
// the six charges came to less, and the first queue won.
func TestEqualWorkTiesAsUpstream(t *testing.T) {
	qs, clock := newFakeQueueSet(2, 1, 12) // hand of 1 from 2 queues: flow 0 → queue 0, flow 1 → queue 1
	startSeated(t, qs, seats(6), 1)
	var ones []*ticket
	for range 6 {
		ones = append(ones, startSeated(t, qs, seats(1), 0))
	}
	first, _, _ := qs.start(seats(1), 0, nil, requestDesc{})
	second, _, _ := qs.start(seats(1), 1, nil, requestDesc{})
	clock.advance(estimatedServiceTime) // as estimated: no settlement
	ones[0].finish()
	if first.executing || !second.executing {
		t.Errorf("after a tie, queue 0's request seated %v and queue 1's %v; want queue 1's (next in round robin)", first.executing, second.executing)
	}
}

// TestBorrowingSharesTheNominalSum: as upstream's updateBorrowing, what the
// exempt level keeps at its peak decides only whether the limited levels
// fall back to their minimums; otherwise they share the server's whole
// nominal seats (602 here), not what the exempt level left.
func TestBorrowingSharesTheNominalSum(t *testing.T) {
	now := time.Unix(0, 0)
	c := bootstrapController(t, func() time.Time { return now })
	c.levels["exempt"].demand.set(now, 40)
	now = now.Add(borrowingPeriod)
	c.mu.Lock()
	c.adjustBorrowing(true)
	c.mu.Unlock()
	limited, nominal := 0, 0
	for _, l := range c.levels {
		nominal += l.nominal
		if !l.exempt {
			limited += l.current
		}
	}
	if ex := c.levels["exempt"].current; ex != 40 {
		t.Errorf("exempt keeps %d seats, want its peak 40", ex)
	}
	if limited < nominal-3 || limited > nominal+3 {
		t.Errorf("limited levels hold %d seats, want the nominal sum %d (±rounding)", limited, nominal)
	}
	if c.fairFrac <= 0 {
		t.Errorf("fair fraction %v", c.fairFrac)
	}
}

// TestExemptRequestsAreDemand: an exempt request's estimated seats are its
// level's demand, which the next adjustment keeps for it.
func TestExemptRequestsAreDemand(t *testing.T) {
	now := time.Unix(0, 0)
	c := bootstrapController(t, func() time.Time { return now })
	d := &Digest{User: "admin", Groups: []string{"system:masters", "system:authenticated"}, IsResource: true, Verb: "list", Resource: "configmaps"}
	a, r := c.Admit(context.Background(), d, time.Minute, func(Classification, int) Estimate { return seats(7) })
	if r != nil || !a.Exempt || a.Seats != 7 {
		t.Fatalf("admission %+v, refusal %+v", a, r)
	}
	now = now.Add(borrowingPeriod)
	a.Release()
	c.mu.Lock()
	c.adjustBorrowing(true)
	c.mu.Unlock()
	if ex := c.levels["exempt"]; ex.current != 7 || ex.peak != 7 || ex.demandAvg != 7 {
		t.Errorf("exempt level: limit %d, peak %v, mean %v; want 7 each", ex.current, ex.peak, ex.demandAvg)
	}
}

// TestReconfigureKeepsWaitingRequests: a new shape changes the queue set in
// place, as upstream's setConfiguration: a request waiting in a queue beyond
// the new number is still served, surplus queues go as they empty, more
// queues are added at once, and with no queues the level refuses what it
// cannot seat.
func TestReconfigureKeepsWaitingRequests(t *testing.T) {
	qs := newQueueSet(time.Now, 4, 1, 10, 1, nil)
	hold, seated, _ := qs.start(seats(1), 0, nil, requestDesc{})
	if !seated {
		t.Fatal("first request not seated")
	}
	var toLast uint64
	for hand := []int{0}; ; toLast++ {
		if DealHand(toLast, 4, hand); hand[0] == 3 {
			break
		}
	}
	waiter, seated, _ := qs.start(seats(1), toLast, nil, requestDesc{})
	if waiter == nil || seated || waiter.q.index != 3 {
		t.Fatalf("second request: %+v seated %v", waiter, seated)
	}
	qs.reconfigure(2, 1, 10, 1)
	if len(qs.queues) != 4 || qs.desired != 2 {
		t.Fatalf("after shrinking: %d queues, %d desired", len(qs.queues), qs.desired)
	}
	hold.finish()
	if !waiter.executing {
		t.Fatal("the request waiting in a surplus queue was not dispatched")
	}
	waiter.finish()
	if len(qs.queues) != 2 {
		t.Errorf("%d queues once the surplus emptied, want 2", len(qs.queues))
	}
	for i, q := range qs.queues {
		if q.index != i {
			t.Errorf("queue %d has index %d", i, q.index)
		}
	}
	qs.reconfigure(6, 2, 10, 1)
	if len(qs.queues) != 6 || qs.handSize != 2 {
		t.Errorf("after growing: %d queues, hand %d", len(qs.queues), qs.handSize)
	}
	qs.reconfigure(0, 0, 0, 1)
	if qs.queueLengthLimit != 10 || qs.handSize != 2 {
		t.Errorf("without queues the limit and hand changed: %d, %d", qs.queueLengthLimit, qs.handSize)
	}
	one, seated, _ := qs.start(seats(1), 5, nil, requestDesc{})
	if !seated {
		t.Fatal("a request on an idle queueless level was not seated")
	}
	if tk, _, reason := qs.start(seats(1), 5, nil, requestDesc{}); tk != nil || reason != rejectConcurrencyLimit {
		t.Errorf("past the limit without queues: %v %q, want %q", tk, reason, rejectConcurrencyLimit)
	}
	one.finish()
}
