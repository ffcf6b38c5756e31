package flowcontrol

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/util/shufflesharding"
)

// TestQueueSetAsUpstream runs the hand-written scenarios and 3,000 random
// ones through upstream's queueset and admitd's, step by step on one
// virtual clock, and requires the same requests seated in the same order
// and the same ones refused for the same reason after every step.
func TestQueueSetAsUpstream(t *testing.T) {
	tl := &tally{rejected: map[string]int{}}
	for _, sc := range handWrittenScenarios() {
		run(t, sc, tl)
	}
	r := rand.New(rand.NewPCG(3, 37))
	for i := range 3000 {
		run(t, randomScenario(r, i), tl)
	}
	t.Log(tl)
	if tl.mismatches > 0 {
		t.Errorf("%d scenarios differ", tl.mismatches)
	}
}

func randomScenario(r *rand.Rand, i int) *scenario {
	sc := &scenario{name: fmt.Sprintf("random %d", i)}
	first := randomShape(r)
	sc.queues, sc.handSize, sc.queueLengthLimit, sc.limit = first.queues, first.handSize, first.queueLengthLimit, first.limit
	// A quarter of the scenarios change the queue set's shape on the way,
	// with no request lingering on final seats: upstream's queueset panics
	// (removeQueueAndUpdateIndexes, slice bounds out of range) when a
	// lingering request's queue was dropped as surplus before its seats
	// were released, so that path cannot be compared.
	reshaped := r.IntN(4) == 0
	flows := make([]uint64, 1+r.IntN(10))
	for f := range flows {
		flows[f] = r.Uint64()
	}
	for range 20 + r.IntN(150) {
		s := step{after: randomAfter(r), nth: r.IntN(1 << 20)}
		switch x := r.IntN(20); {
		case x < 11:
			s.kind = arrive
			s.arrival = randomArrival(r, flows, sc.limit)
			if reshaped {
				s.arrival.latency = 0
			}
		case x < 18:
			s.kind = finishNth
		case x < 19 || !reshaped:
			s.kind = giveUpNth
		default:
			s.kind, s.shape = reconfigure, randomShape(r)
		}
		sc.steps = append(sc.steps, s)
	}
	return sc
}

// randomShape is a level of 0-128 queues (0: none), a hand the queues can
// deal, 1-20 long queues and 1-12 seats.
func randomShape(r *rand.Rand) shape {
	s := shape{limit: 1 + r.IntN(12), queues: []int{0, 1, 2, 8, 64, 128}[r.IntN(6)]}
	if s.queues > 0 {
		for {
			s.handSize = 1 + r.IntN(min(s.queues, 8))
			if _, err := shufflesharding.NewDealer(s.queues, s.handSize); err == nil {
				break
			}
		}
		s.queueLengthLimit = 1 + r.IntN(20)
	}
	return s
}

// randomAfter is no time, a round number of milliseconds (the estimated
// service time is 3 ms) or any number of nanoseconds below 20 ms.
func randomAfter(r *rand.Rand) time.Duration {
	switch x := r.IntN(10); {
	case x < 4:
		return 0
	case x < 7:
		return []time.Duration{1, 2, 3, 5, 10}[r.IntN(5)] * time.Millisecond
	default:
		return time.Duration(r.Int64N(int64(20 * time.Millisecond)))
	}
}

// randomArrival: half of the requests are the first (busy) flow's; most
// take one seat, some up to the limit and a few more than it; a quarter
// hold final seats (up to twice the limit) for a linger, and a few have
// final seats without a linger or a linger without final seats.
func randomArrival(r *rand.Rand, flows []uint64, limit int) arrival {
	a := arrival{hash: flows[0], seats: 1}
	if r.IntN(2) == 0 {
		a.hash = flows[r.IntN(len(flows))]
	}
	switch x := r.IntN(10); {
	case x < 2:
		a.seats = 1 + r.IntN(limit)
	case x < 3:
		a.seats = limit + 1 + r.IntN(4)
	}
	switch x := r.IntN(20); {
	case x < 4:
		a.finalSeats, a.latency = 1+r.IntN(2*limit), time.Duration(1+r.IntN(10))*time.Millisecond
	case x < 5:
		a.finalSeats, a.latency = 1+r.IntN(2*limit), time.Duration(1+r.Int64N(int64(20*time.Millisecond)))
	case x < 6:
		a.finalSeats = 1 + r.IntN(2*limit)
	case x < 7:
		a.latency = time.Duration(1+r.IntN(10)) * time.Millisecond
	}
	return a
}

// Hand-written scenarios.

const (
	busyFlow  = uint64(0x9e3779b97f4a7c15)
	lightFlow = uint64(0x2545f4914f6cdd1d)
	thirdFlow = uint64(0x5851f42d4c957f2d)
)

func arrivals(after time.Duration, n int, a arrival) []step {
	var steps []step
	for range n {
		steps = append(steps, step{after: after, kind: arrive, arrival: a})
	}
	return steps
}

func finishes(after time.Duration, n, nth int) []step {
	var steps []step
	for range n {
		steps = append(steps, step{after: after, kind: finishNth, nth: nth})
	}
	return steps
}

func concat(parts ...[]step) []step {
	var all []step
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

func one(seats int, hash uint64) arrival { return arrival{hash: hash, seats: seats} }

func handWrittenScenarios() []*scenario {
	var scs []*scenario
	for _, shape := range [][2]int{{64, 6}, {128, 6}, {64, 1}, {8, 1}, {128, 8}} {
		name := fmt.Sprintf("busy flow vs light flow, %d queues hand %d", shape[0], shape[1])
		scs = append(scs, &scenario{name: name, queues: shape[0], handSize: shape[1], queueLengthLimit: 50, limit: 1,
			steps: concat(arrivals(0, 20, one(1, busyFlow)), arrivals(time.Millisecond, 1, one(1, lightFlow)),
				arrivals(0, 5, one(1, busyFlow)), finishes(3*time.Millisecond, 3, 0), arrivals(0, 2, one(1, lightFlow)))})
	}
	scs = append(scs,
		&scenario{name: "queue length limit reached", queues: 1, handSize: 1, queueLengthLimit: 3, limit: 2,
			steps: concat(arrivals(0, 8, one(1, busyFlow)), []step{{kind: giveUpNth, nth: 1}}, arrivals(0, 2, one(1, lightFlow)),
				finishes(time.Millisecond, 1, 0), arrivals(0, 2, one(1, busyFlow)))},
		&scenario{name: "queue length limit per queue, hand 2 of 8", queues: 8, handSize: 2, queueLengthLimit: 2, limit: 3,
			steps: concat(arrivals(0, 12, one(1, busyFlow)), arrivals(0, 6, one(1, lightFlow)), finishes(2*time.Millisecond, 4, 1),
				arrivals(0, 6, one(1, thirdFlow)))},
		&scenario{name: "wide requests", queues: 16, handSize: 4, queueLengthLimit: 10, limit: 10,
			steps: concat(arrivals(0, 3, one(4, busyFlow)), arrivals(0, 2, one(8, lightFlow)), arrivals(0, 2, one(12, thirdFlow)),
				arrivals(0, 5, one(1, busyFlow)), finishes(5*time.Millisecond, 3, 0), arrivals(0, 3, one(10, lightFlow)))},
		&scenario{name: "narrow and wide mix, one queue", queues: 1, handSize: 1, queueLengthLimit: 30, limit: 6,
			steps: concat(arrivals(0, 6, one(1, busyFlow)), arrivals(0, 1, one(6, busyFlow)), arrivals(0, 4, one(2, busyFlow)),
				finishes(time.Millisecond, 2, 3), arrivals(0, 1, one(7, busyFlow)), finishes(4*time.Millisecond, 3, 0))},
		&scenario{name: "final seats wider than the level linger longer", queues: 4, handSize: 2, queueLengthLimit: 10, limit: 4,
			steps: concat(arrivals(0, 1, arrival{hash: busyFlow, seats: 1, finalSeats: 8, latency: 100 * time.Millisecond}),
				arrivals(0, 3, one(1, lightFlow)), finishes(time.Millisecond, 1, 0), []step{{after: 150 * time.Millisecond, kind: wait}},
				arrivals(0, 2, arrival{hash: thirdFlow, seats: 2, finalSeats: 3, latency: 5 * time.Millisecond}), finishes(2*time.Millisecond, 2, 0))},
		&scenario{name: "writes lingering on final seats", queues: 64, handSize: 6, queueLengthLimit: 50, limit: 10,
			steps: concat(arrivals(0, 12, arrival{hash: busyFlow, seats: 1, finalSeats: 3, latency: 5 * time.Millisecond}),
				arrivals(0, 6, one(1, lightFlow)), finishes(time.Millisecond, 5, 0), arrivals(2*time.Millisecond, 4, one(1, thirdFlow)))},
		&scenario{name: "final seats without a linger", queues: 8, handSize: 2, queueLengthLimit: 10, limit: 4,
			steps: concat(arrivals(0, 3, arrival{hash: busyFlow, seats: 1, finalSeats: 3}), arrivals(0, 3, one(1, lightFlow)),
				finishes(time.Millisecond, 2, 0))},
		&scenario{name: "no queues: refused when the seats are taken", limit: 3,
			steps: concat(arrivals(0, 4, one(1, busyFlow)), arrivals(0, 1, one(5, lightFlow)), finishes(time.Millisecond, 3, 0),
				arrivals(0, 1, one(5, lightFlow)), arrivals(0, 1, one(1, busyFlow)), finishes(time.Millisecond, 1, 0),
				arrivals(0, 1, arrival{hash: busyFlow, seats: 1, finalSeats: 4, latency: 10 * time.Millisecond}), finishes(0, 1, 0),
				arrivals(time.Millisecond, 2, one(1, lightFlow)), []step{{after: 10 * time.Millisecond, kind: wait}}, arrivals(0, 1, one(1, lightFlow)))},
		// hand 1 of 2 queues: flow 0 → queue 0, flow 1 → queue 1
		&scenario{name: "six one-seat requests tie with one six-seat request", queues: 2, handSize: 1, queueLengthLimit: 10, limit: 12,
			steps: concat(arrivals(0, 1, one(6, 1)), arrivals(0, 6, one(1, 0)), arrivals(0, 1, one(1, 0)), arrivals(0, 1, one(1, 1)),
				finishes(3*time.Millisecond, 1, 1))},
		&scenario{name: "long and short service times", queues: 8, handSize: 3, queueLengthLimit: 20, limit: 2,
			steps: concat(arrivals(0, 6, one(1, busyFlow)), arrivals(0, 6, one(1, lightFlow)), finishes(50*time.Millisecond, 1, 0),
				finishes(100*time.Microsecond, 3, 0), arrivals(0, 3, one(1, thirdFlow)), finishes(20*time.Millisecond, 4, 1))},
	)
	return scs
}
