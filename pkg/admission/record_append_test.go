package admission

import "testing"

func TestAppendStepsReusesTheBuffer(t *testing.T) {
	r := NewRecord()
	r.AddStep(Step{Plugin: "A"})
	r.AddStep(Step{Plugin: "B", Name: "b"})
	buf := make([]Step, 0, 4)
	got := r.AppendSteps(buf)
	if len(got) != 2 || got[0].Plugin != "A" || got[1].Name != "b" || &got[:1][0] != &buf[:1][0] {
		t.Errorf("AppendSteps = %+v, want steps A and B in the given buffer", got)
	}
	if n := testing.AllocsPerRun(10, func() { got = r.AppendSteps(got[:0]) }); n != 0 {
		t.Errorf("AppendSteps into a buffer with room allocates %v times, want 0", n)
	}
}
