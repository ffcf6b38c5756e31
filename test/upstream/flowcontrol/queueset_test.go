package flowcontrol

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// scenario is one priority level's queue set and what happens to it.
type scenario struct {
	name                                      string
	queues, handSize, queueLengthLimit, limit int
	steps                                     []step
}

type stepKind int

const (
	arrive stepKind = iota
	finishNth
	giveUpNth
	wait        // the clock only advances
	reconfigure // a new shape and limit
)

// step happens once the clock advanced by after: a request arrives, or
// the nth (modulo their count) executing request, oldest seated first,
// finishes, or the nth waiting request, oldest first, gives up, or the
// queue set takes a new shape.
type step struct {
	after   time.Duration
	kind    stepKind
	arrival arrival
	nth     int
	shape   shape
}

// shape is a queue set's configuration.
type shape struct {
	queues, handSize, queueLengthLimit, limit int
}

// arrival is a request's flow and work estimate.
type arrival struct {
	hash              uint64
	seats, finalSeats int
	latency           time.Duration
}

func (a arrival) String() string {
	s := fmt.Sprintf("flow %x seats %d", a.hash&0xffff, a.seats)
	if a.finalSeats > 0 || a.latency > 0 {
		s += fmt.Sprintf(" final %d for %v", a.finalSeats, a.latency)
	}
	return s
}

// tally counts what the differential compared.
type tally struct {
	scenarios, steps, arrivals, dispatches, finishes, giveUps, lingering, reconfigurations, mismatches int
	rejected                                                                                           map[string]int
}

func (t *tally) String() string {
	return fmt.Sprintf("%d scenarios, %d steps: %d arrivals (%d with a linger), %d dispatches, %d finishes, %d give-ups, %d reconfigurations, rejected %v; %d mismatched",
		t.scenarios, t.steps, t.arrivals, t.lingering, t.dispatches, t.finishes, t.giveUps, t.reconfigurations, t.rejected, t.mismatches)
}

// run drives upstream's and admitd's queue sets through sc and then
// through a drain (the oldest executing request finishing every 3 ms
// until nothing waits or executes, and lingering ends), comparing after
// each step which requests were seated, in which order, and which were
// refused and why. It stops at the first difference.
func run(t *testing.T, sc *scenario, tl *tally) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d := &driver{t: t, sc: sc, tally: tl, now: start,
		sides: [2]queueingSide{newUpstreamSide(t, sc, start), newAdmitdSide(sc, start)}}
	tl.scenarios++
	for _, s := range sc.steps {
		if !d.do(s) {
			return
		}
	}
	for i := 0; len(d.executing)+len(d.waiting) > 0; i++ {
		s := step{after: 3 * time.Millisecond, kind: finishNth}
		if len(d.executing) == 0 { // lingering seats hold the level
			s = step{after: time.Second, kind: wait}
		}
		if i > 10*len(sc.steps)+100 {
			t.Fatalf("%s: does not drain: waiting %v executing %v", sc.name, d.waiting, d.executing)
		}
		if !d.do(s) {
			return
		}
	}
	d.do(step{after: time.Minute, kind: wait})
}

// driver holds a scenario's state as upstream reports it.
type driver struct {
	t       *testing.T
	sc      *scenario
	tally   *tally
	sides   [2]queueingSide
	now     time.Time
	next    int   // the next request id
	waiting []int // in arrival order
	// executing is in the order seated.
	executing []int
	history   []string
}

// do runs one step on both sides: the clock advances (lingering ends),
// then the step's request arrives, finishes or gives up. False when the
// sides differ.
func (d *driver) do(s step) bool {
	d.now = d.now.Add(s.after)
	var lines [2]string
	var ended []int
	for i, side := range d.sides {
		side.advance(d.now)
		seated := side.takeDispatched()
		lines[i] = fmt.Sprintf("+%v: seated %v as lingering ended", s.after, seated)
		if i == 0 {
			ended = seated
		}
	}
	d.seated(ended)
	if s.kind == finishNth && len(d.executing) == 0 || s.kind == giveUpNth && len(d.waiting) == 0 {
		s.kind = wait
	}
	id := d.next
	var dispatched []int
	var reason string
	for i, side := range d.sides {
		var what string
		switch s.kind {
		case arrive:
			r := side.arrive(id, s.arrival)
			what = fmt.Sprintf("r%d arrives (%v): %s", id, s.arrival, orText(r, "accepted"))
			reason = r
		case finishNth:
			side.finish(d.executing[s.nth%len(d.executing)])
			what = fmt.Sprintf("r%d finishes", d.executing[s.nth%len(d.executing)])
		case giveUpNth:
			w := d.waiting[s.nth%len(d.waiting)]
			what = fmt.Sprintf("r%d gives up: left %v", w, side.giveUp(w))
		case reconfigure:
			side.reconfigure(s.shape)
			what = fmt.Sprintf("reconfigured to %+v", s.shape)
		default:
			what = "nothing happens"
		}
		seated := side.takeDispatched()
		lines[i] += fmt.Sprintf("; %s; seated %v", what, seated)
		if i == 0 {
			dispatched = seated
		}
	}
	d.tally.steps++
	d.history = append(d.history, lines[0])
	if lines[0] != lines[1] {
		d.tally.mismatches++
		from := max(0, len(d.history)-12)
		d.t.Errorf("%s (queues %d, hand %d, queue length %d, limit %d), step %d:\nupstream: %s\nadmitd:   %s\nsteps before (upstream's):\n  %s",
			d.sc.name, d.sc.queues, d.sc.handSize, d.sc.queueLengthLimit, d.sc.limit, len(d.history),
			lines[0], lines[1], strings.Join(d.history[from:len(d.history)-1], "\n  "))
		return false
	}
	d.apply(s, id, reason)
	d.seated(dispatched)
	return true
}

// apply moves the scenario's state on as upstream's step went.
func (d *driver) apply(s step, id int, reason string) {
	switch s.kind {
	case arrive:
		d.next++
		d.tally.arrivals++
		if s.arrival.latency > 0 {
			d.tally.lingering++
		}
		if reason != "" {
			d.tally.rejected[reason]++
			break
		}
		d.waiting = append(d.waiting, id)
	case finishNth:
		d.tally.finishes++
		d.executing = slices.Delete(d.executing, s.nth%len(d.executing), s.nth%len(d.executing)+1)
	case reconfigure:
		d.tally.reconfigurations++
	case giveUpNth:
		d.tally.giveUps++
		d.waiting = slices.Delete(d.waiting, s.nth%len(d.waiting), s.nth%len(d.waiting)+1)
	}
}

// seated moves requests from waiting to executing.
func (d *driver) seated(ids []int) {
	for _, r := range ids {
		d.tally.dispatches++
		d.waiting = slices.DeleteFunc(d.waiting, func(w int) bool { return w == r })
		d.executing = append(d.executing, r)
	}
}

func orText(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}
