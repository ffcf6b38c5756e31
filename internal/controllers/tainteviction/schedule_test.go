package tainteviction

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// take is the next firing of s's queue, or false if none comes within a
// second.
func take(t *testing.T, s *schedule) (firing, bool) {
	t.Helper()
	got := make(chan firing, 1)
	go func() {
		if f, quit := s.queue.Get(); !quit {
			s.queue.Done(f)
			got <- f
		}
	}()
	select {
	case f := <-got:
		return f, true
	case <-time.After(time.Second):
		return firing{}, false
	}
}

func TestSchedule(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newSchedule(clk)
	defer s.queue.ShutDown()
	now := clk.Now()

	// a waiting deletion: known, not yet due, cancelled with an event
	s.add("ns/a", now, now.Add(30*time.Second))
	s.add("ns/a", now, now.Add(time.Second)) // kept: one is scheduled
	if at, ok := s.createdAt("ns/a"); !ok || !at.Equal(now) {
		t.Errorf("createdAt(ns/a) = %v, %v; want %v", at, ok, now)
	}
	if !s.cancel("ns/a") || s.cancel("ns/a") {
		t.Errorf("cancel(ns/a) twice: want true then false")
	}

	// an immediate deletion: runs even once cancelled (without an event)
	s.add("ns/b", now, now)
	if _, ok := s.createdAt("ns/b"); ok {
		t.Errorf("createdAt(ns/b): an immediate deletion is reported as waiting")
	}
	if s.cancel("ns/b") {
		t.Errorf("cancel(ns/b) = true, want false for an immediate deletion")
	}
	f, ok := take(t, s)
	if !ok || f.pod != "ns/b" || !s.due(f) {
		t.Fatalf("first firing %+v (%v), want ns/b due at once", f, ok)
	}

	// the cancelled waiting deletion, then one scheduled anew: only the
	// new one fires when the clock passes them (the cancelled one's timer
	// was stopped, so nothing of it is left waiting)
	s.add("ns/a", now, now.Add(20*time.Second))
	clk.Step(31 * time.Second)
	f, ok = take(t, s)
	if !ok || !s.due(f) || f.fireAt.Sub(now) != 20*time.Second {
		t.Fatalf("firing %+v (%v), want ns/a due at 20s", f, ok)
	}
	s.done(f)
	if f, ok := take(t, s); ok {
		t.Errorf("a second firing %+v came: the cancelled deletion's timer still ran", f)
	}
	if s.scheduled() != 0 {
		t.Errorf("%d deletions left, want none", s.scheduled())
	}
}
