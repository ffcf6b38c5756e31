package admission

import "testing"

// TestReservedStepsWaitForAStep: reserving room allocates nothing (a
// request no plugin leaves a step on stays small); the first step makes
// the reserved room.
func TestReservedStepsWaitForAStep(t *testing.T) {
	r := NewRecord()
	a := &Attributes{Name: "x", Operation: Create}
	r.noteRequestSteps(a, 8)
	if n := testing.AllocsPerRun(20, func() { r.noteRequestSteps(a, 8) }); n != 0 {
		t.Errorf("noteRequestSteps allocated %v times", n)
	}
	r.AddStep(Step{Plugin: "p"})
	if got := cap(r.order); got != 8 {
		t.Errorf("first step made room for %d steps, want the 8 reserved", got)
	}
	r2 := NewRecord()
	r2.AddStep(Step{Plugin: "p"})
	if got := cap(r2.order); got != initialSteps {
		t.Errorf("unreserved record: room for %d steps, want %d", got, initialSteps)
	}
}

// TestCompactAndWholeStepsKeepTheirOrder: plugin steps kept compact and
// steps kept whole come back from Steps in the order they were recorded.
func TestCompactAndWholeStepsKeepTheirOrder(t *testing.T) {
	r := NewRecord()
	a, _ := internStepName("A")
	b, _ := internStepName("B")
	r.appendPluginSteps([]stepRef{pluginStepRef(a, false, 0, 3)})
	r.AddStep(Step{Plugin: "MutatingAdmissionWebhook", Name: "w", Matched: true, Reason: "patched"})
	r.appendPluginSteps([]stepRef{pluginStepRef(b, true, 1, 5)})
	got := r.Steps()
	want := []Step{
		{Plugin: "A", Matched: true, Reason: "admit", Duration: 3},
		{Plugin: "MutatingAdmissionWebhook", Name: "w", Matched: true, Reason: "patched"},
		{Plugin: "B", Matched: true, Reason: "validate", Round: 1, Duration: 5},
	}
	if len(got) != len(want) {
		t.Fatalf("Steps() = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Plugin != want[i].Plugin || got[i].Name != want[i].Name || got[i].Reason != want[i].Reason ||
			got[i].Round != want[i].Round || got[i].Duration != want[i].Duration || got[i].Matched != want[i].Matched {
			t.Errorf("Steps()[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if !r.HasSteps() {
		t.Error("HasSteps() = false, want true")
	}
	appended := r.AppendSteps(nil)
	if len(appended) != len(got) {
		t.Fatalf("AppendSteps = %d steps, Steps %d", len(appended), len(got))
	}
	for i := range got {
		if appended[i].Plugin != got[i].Plugin || appended[i].Reason != got[i].Reason || appended[i].Duration != got[i].Duration {
			t.Errorf("AppendSteps()[%d] = %+v, Steps()[%d] = %+v", i, appended[i], i, got[i])
		}
	}
}
