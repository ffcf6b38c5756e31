package admission

import (
	"math"
	"sync"
	"time"
)

// stepRef is one entry of a Record's trace. A compiled-in plugin's step,
// by far the most common, is held whole in it, with the plugin's name as
// an index into stepNames; any other step is kept as a Step and referred
// to by full.
type stepRef struct {
	dur   time.Duration
	full  int32  // 1 + index into Record.steps; 0 for a plugin step
	name  uint16 // plugin step: index into stepNames
	phase uint8  // plugin step: 0 admit, 1 validate, with phaseSkipped
	round uint8  // plugin step: the mutating pass
}

// phaseSkipped marks in stepRef.phase a plugin the chain did not call.
const phaseSkipped = 2

// step returns the Step ref stands for.
func (ref stepRef) step(full []Step) Step {
	if ref.full > 0 {
		return full[ref.full-1]
	}
	reason := "admit"
	if ref.phase&1 == 1 {
		reason = "validate"
	}
	s := Step{Plugin: stepName(ref.name), Matched: true, Reason: reason, Round: int(ref.round), Duration: ref.dur}
	if ref.phase&phaseSkipped != 0 {
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
