package admission

import (
	"context"
	"sync/atomic"
	"time"
)

// clockEpoch anchors monotonicNow.
var clockEpoch = time.Now()

// monotonicNow reads the monotonic clock alone (time.Now reads the wall
// clock too): the chain reads it once per plugin.
func monotonicNow() time.Duration { return time.Since(clockEpoch) }

// Scoped is implemented by a plugin that looks at some requests only (a
// resource, a subresource, an operation, or none while its feature gate is
// off): Concerns reports whether it looks at a. On a request it does not
// look at, its Admit and Validate must return nil and change nothing. The
// chain does not call it there, nor read the clock for it: it still counts
// in the plugin's latency metric, with zero seconds (what it would spend is
// a few nanoseconds, well inside the metric's first bucket; they count into
// the next plugin's time), and its trace step is skipped with reason
// SkipResource.
type Scoped interface {
	Concerns(a *Attributes) bool
}

// NamedPlugin is a plugin with the name it was registered under.
type NamedPlugin struct {
	Name   string
	Plugin Handler
}

// StepRecorder is implemented by plugins that leave their own steps in the
// trace (one per webhook or policy considered). For every other plugin the
// chain leaves one step per phase it runs.
type StepRecorder interface {
	RecordsOwnSteps()
}

// Chain runs plugins in order. The mutating phase stops at the first error and
// runs a second pass when a plugin requests reinvocation; the validating phase
// stops at the first error. The zero Chain admits everything.
type Chain struct {
	plugins []NamedPlugin
	metrics *Metrics
	// series holds, per plugin, the metric series it has observed, found
	// once instead of by label values on every request.
	series []pluginSeries
	// ownSteps says, per plugin, whether it records its own trace steps.
	ownSteps []bool
	// mutators and validators are, per plugin, the plugin as a Mutator
	// and a Validator, nil where it is not one (asserted once, not per
	// request).
	mutators   []Mutator
	validators []Validator
	// scoped is, per plugin, the plugin as Scoped, nil where it is not.
	scoped []Scoped
	// admitting and validating are, per operation (operationIndex), the
	// plugins that run in each phase, in order: Handles is asked once,
	// when the chain is built, not on every request.
	admitting, validating [4][]int
	// stepName is, per plugin, its interned name for compact trace steps;
	// compact says whether it has one.
	stepName []uint16
	compact  []bool
	// stepsHint is, per operation (operationIndex), the room a request's
	// trace starts with: a step per phase per plugin, and some for the
	// webhooks and policies of a plugin that records its own.
	stepsHint [4]int
}

// ownStepsRoom is the room kept per plugin that records its own steps.
const ownStepsRoom = 4

// pluginSeries are one plugin's latency series by operation, phase and
// outcome, created on first use (as upstream, a series appears once
// observed).
type pluginSeries [4][2][2]atomic.Pointer[durationSeries]

var _ Interface = (*Chain)(nil)

// NewChain returns a chain of the given plugins, in order.
func NewChain(plugins ...NamedPlugin) *Chain {
	n := len(plugins)
	c := &Chain{plugins: plugins, ownSteps: make([]bool, n), mutators: make([]Mutator, n),
		validators: make([]Validator, n), scoped: make([]Scoped, n), stepName: make([]uint16, n), compact: make([]bool, n)}
	for i, p := range plugins {
		_, c.ownSteps[i] = p.Plugin.(StepRecorder)
		c.mutators[i], _ = p.Plugin.(Mutator)
		c.validators[i], _ = p.Plugin.(Validator)
		c.scoped[i], _ = p.Plugin.(Scoped)
		c.stepName[i], c.compact[i] = internStepName(p.Name)
	}
	for i, op := range []Operation{Create, Update, Delete, Connect} {
		c.stepsHint[i] = c.stepsOn(op)
		for j := range plugins {
			if m := c.mutators[j]; m != nil && m.Handles(op) {
				c.admitting[i] = append(c.admitting[i], j)
			}
			if v := c.validators[j]; v != nil && v.Handles(op) {
				c.validating[i] = append(c.validating[i], j)
			}
		}
	}
	return c
}

// stepsOn is the number of trace steps the chain's plugins leave on a
// request of op in one pass of each phase.
func (c *Chain) stepsOn(op Operation) int {
	n := 0
	for i, p := range c.plugins {
		if c.ownSteps[i] {
			n += ownStepsRoom
			continue
		}
		if m, ok := p.Plugin.(Mutator); ok && m.Handles(op) {
			n++
		}
		if v, ok := p.Plugin.(Validator); ok && v.Handles(op) {
			n++
		}
	}
	return n
}

// WithMetrics makes the chain observe step and per-plugin latencies.
func (c *Chain) WithMetrics(m *Metrics) *Chain {
	c.metrics = m
	c.series = make([]pluginSeries, len(c.plugins))
	return c
}

// operationIndex numbers the four operations for pluginSeries.
func operationIndex(op Operation) int {
	switch op {
	case Create:
		return 0
	case Update:
		return 1
	case Delete:
		return 2
	}
	return 3
}

// observePlugin records the latency of plugin i in phase ("admit" or
// "validate").
func (c *Chain) observePlugin(i int, took time.Duration, rejected bool, op Operation, phase string) {
	if c.metrics == nil {
		return
	}
	ph, rej := 0, 0
	if phase == "validate" {
		ph = 1
	}
	if rejected {
		rej = 1
	}
	slot := &c.series[i][operationIndex(op)][ph][rej]
	s := slot.Load()
	if s == nil {
		s = c.metrics.controllerSeries(rejected, op, phase, c.plugins[i].Name)
		slot.Store(s)
	}
	s.observe(took)
}

// Plugins returns the plugins of the chain in order.
func (c *Chain) Plugins() []NamedPlugin { return c.plugins }

// Handles reports whether any plugin handles op.
func (c *Chain) Handles(op Operation) bool {
	for _, p := range c.plugins {
		if p.Plugin.Handles(op) {
			return true
		}
	}
	return false
}

// Admit runs the mutating phase, with at most one reinvocation pass.
func (c *Chain) Admit(ctx context.Context, a *Attributes) error {
	start := monotonicNow()
	if a.Record != nil {
		a.Record.noteRequestSteps(a, c.stepsHint[operationIndex(a.Operation)])
	}
	end, err := c.admitOnce(ctx, a, start)
	if err == nil && a.Record != nil && a.Record.startReinvocation() {
		end, err = c.admitOnce(ctx, a, monotonicNow())
	}
	c.metrics.ObserveAdmissionStep(end-start, err != nil, a.Operation, "admit")
	return err
}

// Durations are read off one monotonic clock once per plugin: a plugin's
// duration runs from the end of the previous plugin's call (or the start
// of the pass) to the end of its own, so it also counts the chain's
// bookkeeping of the plugin before it (tens of nanoseconds); a phase ends
// with its last plugin. Each pass returns the clock at its end.

func (c *Chain) admitOnce(ctx context.Context, a *Attributes, mark time.Duration) (time.Duration, error) {
	round := 0
	if a.Record != nil && a.Record.IsReinvoke() {
		round = 1
	}
	var steps pendingSteps
	defer steps.flush(a.Record)
	changes := newChangeWatch(a)
	if changes.on {
		mark = monotonicNow() // the plugins' time leaves out the watch's
	}
	for _, i := range c.admitting[operationIndex(a.Operation)] {
		m := c.mutators[i]
		if c.scoped[i] != nil && !c.scoped[i].Concerns(a) {
			c.skip(a, &steps, i, "admit", round)
			continue
		}
		if c.ownSteps[i] {
			steps.flush(a.Record)
		}
		err := m.Admit(ctx, a)
		now := monotonicNow()
		took := now - mark
		mark = now
		c.observePlugin(i, took, err != nil, a.Operation, "admit")
		var change *StepDetail
		if base, after, changed := changes.check(a); changed {
			change = &StepDetail{Base: base, After: after}
		}
		if changes.on {
			mark = monotonicNow()
		}
		c.addPluginStep(a, &steps, i, "admit", round, took, err, change)
		if err != nil {
			c.rejected(a, i)
			return mark, err
		}
	}
	return mark, nil
}

// Validate runs the validating phase.
func (c *Chain) Validate(ctx context.Context, a *Attributes) (err error) {
	start := monotonicNow()
	if a.Record != nil {
		a.Record.noteRequest(a)
	}
	mark := start
	defer func() { c.metrics.ObserveAdmissionStep(mark-start, err != nil, a.Operation, "validate") }()
	var steps pendingSteps
	defer steps.flush(a.Record)
	for _, i := range c.validating[operationIndex(a.Operation)] {
		v := c.validators[i]
		if c.scoped[i] != nil && !c.scoped[i].Concerns(a) {
			c.skip(a, &steps, i, "validate", 0)
			continue
		}
		if c.ownSteps[i] {
			steps.flush(a.Record)
		}
		err := v.Validate(ctx, a)
		now := monotonicNow()
		took := now - mark
		mark = now
		c.observePlugin(i, took, err != nil, a.Operation, "validate")
		c.addPluginStep(a, &steps, i, "validate", 0, took, err, nil)
		if err != nil {
			c.rejected(a, i)
			return err
		}
	}
	return nil
}

// addPluginStep leaves the trace step of a plugin that records none of its
// own: its name, the phase ("admit" or "validate") as Reason, the pass
// (round 1 is the mutating phase's second pass), the time it took and its
// error; change, when not nil, is how it changed the object (verbose traces
// only), which marks the step Mutated.
func (c *Chain) addPluginStep(a *Attributes, steps *pendingSteps, i int, phase string, round int, took time.Duration, err error, change *StepDetail) {
	if a.Record == nil || c.ownSteps[i] {
		return
	}
	if err == nil && change == nil && c.compact[i] {
		steps.add(a.Record, pluginStepRef(c.stepName[i], phase == "validate", round, took))
		return
	}
	steps.flush(a.Record)
	s := Step{Plugin: c.plugins[i].Name, Matched: true, Reason: phase, Round: round, Duration: took,
		Mutated: change != nil, Detail: change}
	if err != nil {
		s.Err = err.Error()
	}
	a.Record.AddStep(s)
}

// skip counts plugin i, which does not look at the request, in its metric
// and leaves its step, skipped with reason SkipResource.
func (c *Chain) skip(a *Attributes, steps *pendingSteps, i int, phase string, round int) {
	c.observePlugin(i, 0, false, a.Operation, phase)
	if a.Record == nil || c.ownSteps[i] {
		return
	}
	if c.compact[i] {
		steps.add(a.Record, skippedStepRef(c.stepName[i], phase == "validate", round))
		return
	}
	steps.flush(a.Record)
	a.Record.AddStep(Step{Plugin: c.plugins[i].Name, Reason: phase, Round: round, Skip: SkipResource})
}

// rejected notes in the record that plugin i ended admission.
func (c *Chain) rejected(a *Attributes, i int) {
	if a.Record != nil {
		a.Record.markRejected(c.plugins[i].Name)
	}
}
