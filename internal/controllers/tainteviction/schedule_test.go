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
	// new one is due when the clock passes them
	s.add("ns/a", now, now.Add(20*time.Second))
	clk.Step(31 * time.Second)
	var due []string
	for range 2 {
		f, ok := take(t, s)
		if !ok {
			t.Fatal("a firing of ns/a did not come")
		}
		if s.due(f) {
			due = append(due, f.fireAt.Sub(now).String())
			s.done(f)
		}
	}
	if len(due) != 1 || due[0] != "20s" || s.scheduled() != 0 {
		t.Errorf("due %v with %d left, want [20s] and none", due, s.scheduled())
	}
}
