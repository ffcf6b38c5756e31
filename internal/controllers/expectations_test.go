package controllers

import (
	"testing"
	"time"
)

// An owner is satisfied once every expected create and delete is seen or
// lowered, or when its expectations expire; a tracked delete counts once
// however often its pod is seen going; new expectations replace old ones.
func TestExpectations(t *testing.T) {
	now := time.Unix(1000, 0)
	e := newExpectationsAt(func() time.Time { return now })
	step := func(what string, want bool) {
		t.Helper()
		if got := e.Satisfied("ns/a"); got != want {
			t.Fatalf("%s: Satisfied = %v, want %v", what, got, want)
		}
	}
	step("nothing expected", true)

	e.Expect("ns/a", 2, 1)
	step("2 creates and 1 delete expected", false)
	e.CreationObserved("ns/a")
	e.DeletionObserved("ns/a")
	step("1 create left", false)
	e.CreationObserved("ns/other")
	step("another owner's create", false)
	e.Lower("ns/a", 1, 0)
	step("the last create lowered", true)

	e.ExpectDeletionsOf("ns/a", []string{"ns/p1", "ns/p2", "ns/p2"})
	step("deletes of p1 and p2 expected", false)
	e.DeletionOfObserved("ns/a", "ns/p1")
	e.DeletionOfObserved("ns/a", "ns/p1")
	e.DeletionOfObserved("ns/a", "ns/p3")
	step("p1 seen twice, p3 not awaited", false)
	e.DeletionOfObserved("ns/a", "ns/p2")
	step("p2 seen", true)

	e.Expect("ns/a", 1, 0)
	now = now.Add(ExpectationsTimeout)
	step("at the timeout", false)
	now = now.Add(time.Nanosecond)
	step("past the timeout", true)

	e.Expect("ns/a", 1, 0)
	e.Forget("ns/a")
	step("forgotten", true)
}
