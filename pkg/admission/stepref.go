package admission

import (
	"math"
	"sync"
	"time"
)

// stepRef is one entry of a Record's trace, in one word. A compiled-in
// plugin's step, by far the most common, is held whole in it: the plugin's
// name as an index into stepNames, its phase and pass, and its duration.
// Any other step is kept as a Step and referred to by its index.
//
//	bits  0–15  plugin step: name index
//	bit   16    plugin step: validate phase (else admit)
//	bit   17    plugin step: skipped (the chain did not call it)
//	bit   18    plugin step: the mutating phase's second pass
//	bit   19    a whole step: bits 20– are its index in Record.steps
//	bits 20–63  plugin step: duration in nanoseconds (saturating at ~4.9 h)
type stepRef uint64

const (
	refValidate   stepRef = 1 << 16
	refSkipped    stepRef = 1 << 17
	refSecondPass stepRef = 1 << 18
	refWhole      stepRef = 1 << 19
	refHighShift          = 20
	maxRefHigh            = 1<<(64-refHighShift) - 1
)

// pluginStepRef is the step of a compiled-in plugin that ran without
// error: the plugin's interned name, its phase, pass and duration. Nothing
// of it holds a pointer, so the trace of a request costs one small
// allocation that the garbage collector does not scan.
func pluginStepRef(name uint16, validate bool, round int, took time.Duration) stepRef {
	ref := stepRef(name)
	if validate {
		ref |= refValidate
	}
	if round > 0 {
		ref |= refSecondPass
	}
	d := uint64(max(took, 0))
	return ref | stepRef(min(d, maxRefHigh))<<refHighShift
}

// skippedStepRef is the step of a compiled-in plugin the chain did not call
// because it does not look at the request (Scoped).
func skippedStepRef(name uint16, validate bool, round int) stepRef {
	return pluginStepRef(name, validate, round, 0) | refSkipped
}

// wholeStepRef refers to Record.steps[i].
func wholeStepRef(i int) stepRef { return refWhole | stepRef(i)<<refHighShift }

// step returns the Step ref stands for.
func (ref stepRef) step(whole []Step) Step {
	if ref&refWhole != 0 {
		return whole[ref>>refHighShift]
	}
	reason, round := "admit", 0
	if ref&refValidate != 0 {
		reason = "validate"
	}
	if ref&refSecondPass != 0 {
		round = 1
	}
	s := Step{Plugin: stepName(uint16(ref)), Matched: true, Reason: reason, Round: round, Duration: time.Duration(ref >> refHighShift)}
	if ref&refSkipped != 0 {
		s.Matched, s.Skip = false, SkipResource
	}
	return s
}

// stepNames interns the names of the plugins of every chain built, so that
// a plugin step refers to its name by a small index. It only grows: the
// names are those of registered plugins.
var stepNames struct {
	mu     sync.RWMutex
	byName map[string]uint16
	names  []string
}

// internStepName returns the index of name, adding it; ok is false when
// the table is full (the chain then records the plugin's steps whole).
func internStepName(name string) (idx uint16, ok bool) {
	stepNames.mu.Lock()
	defer stepNames.mu.Unlock()
	if i, found := stepNames.byName[name]; found {
		return i, true
	}
	if len(stepNames.names) > math.MaxUint16 {
		return 0, false
	}
	if stepNames.byName == nil {
		stepNames.byName = map[string]uint16{}
	}
	i := uint16(len(stepNames.names))
	stepNames.byName[name] = i
	stepNames.names = append(stepNames.names, name)
	return i, true
}

// stepName returns the name interned at i.
func stepName(i uint16) string {
	stepNames.mu.RLock()
	defer stepNames.mu.RUnlock()
	return stepNames.names[i]
}
