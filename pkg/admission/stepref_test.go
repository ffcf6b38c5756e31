package admission

import (
	"testing"
	"time"
)

// TestStepRefRoundTrips: a plugin step packed into a stepRef comes back
// with its name, phase, pass, skip and duration (long ones saturate, they
// do not wrap), and a whole step's ref finds it at any index.
func TestStepRefRoundTrips(t *testing.T) {
	name, _ := internStepName("StepRefPlugin")
	for _, tc := range []struct {
		validate, skipped bool
		round             int
		took, want        time.Duration
	}{
		{false, false, 0, 1234567, 1234567},
		{true, false, 1, 0, 0},
		{true, true, 0, 0, 0},
		{false, true, 1, 0, 0},
		{false, false, 0, 3 * time.Hour, 3 * time.Hour},
		{false, false, 1, 1000 * time.Hour, time.Duration(maxRefHigh)},
	} {
		ref := pluginStepRef(name, tc.validate, tc.round, tc.took)
		if tc.skipped {
			ref = skippedStepRef(name, tc.validate, tc.round)
		}
		got := ref.step(nil)
		reason := "admit"
		if tc.validate {
			reason = "validate"
		}
		if got.Plugin != "StepRefPlugin" || got.Reason != reason || got.Round != tc.round || got.Duration != tc.want ||
			got.Matched == tc.skipped || (got.Skip == SkipResource) != tc.skipped {
			t.Errorf("%+v: step = %+v", tc, got)
		}
	}
	whole := make([]Step, 70000)
	whole[69999] = Step{Plugin: "last"}
	if got := wholeStepRef(69999).step(whole); got.Plugin != "last" {
		t.Errorf("whole step 69999 = %+v", got)
	}
}
