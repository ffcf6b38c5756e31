package admission

import "testing"

// TestReservedStepsWaitForAStep: reserving room allocates nothing (a
// request no plugin leaves a step on stays small); the first step makes
// the reserved room.
func TestReservedStepsWaitForAStep(t *testing.T) {
	r := NewRecord()
	if n := testing.AllocsPerRun(20, func() { r.reserveSteps(8) }); n != 0 {
		t.Errorf("reserveSteps allocated %v times", n)
	}
	r.AddStep(Step{Plugin: "p"})
	if got := cap(r.steps); got != 8 {
		t.Errorf("first step made room for %d steps, want the 8 reserved", got)
	}
	r2 := NewRecord()
	r2.AddStep(Step{Plugin: "p"})
	if got := cap(r2.steps); got != initialSteps {
		t.Errorf("unreserved record: room for %d steps, want %d", got, initialSteps)
	}
}
