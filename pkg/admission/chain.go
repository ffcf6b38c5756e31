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
	// links are, per plugin, what running it takes, worked out once.
	links []link
	// admitting and validating are, per operation (operationIndex), the
	// plugins that run in each phase, in order: Handles is asked once,
	// when the chain is built, not on every request.
	admitting, validating [4][]*link
	// stepsHint is, per operation (operationIndex), the room a request's
	// trace starts with: a step per phase per plugin, and some for the
	// webhooks and policies of a plugin that records its own.
	stepsHint [4]int
}

// link is one plugin of a chain with what the chain asserts and looks up
// about it once instead of on every request.
type link struct {
	name      string
	mutator   Mutator   // nil when the plugin is not one
	validator Validator // nil when the plugin is not one
	scoped    Scoped    // nil when the plugin is not one
	// ownSteps says whether it records its own trace steps.
	ownSteps bool
	// compact says whether it has stepName, its interned name for
	// compact trace steps.
	compact  bool
	stepName uint16
	// series holds the metric series it has observed, found once instead
	// of by label values on every request; nil without metrics.
	series *pluginSeries
}

// ownStepsRoom is the room kept per plugin that records its own steps.
const ownStepsRoom = 4

// pluginSeries are one plugin's latency series by operation, phase and
// outcome, created on first use (as upstream, a series appears once
// observed).
type pluginSeries [4][2][2]atomic.Pointer[durationSeries]

// The phases, as pluginSeries and trace steps number them.
const (
	admitPhase    = 0
	validatePhase = 1
)

var phaseNames = [2]string{"admit", "validate"}

var _ Interface = (*Chain)(nil)

// NewChain returns a chain of the given plugins, in order.
func NewChain(plugins ...NamedPlugin) *Chain {
	c := &Chain{plugins: plugins, links: make([]link, len(plugins))}
	for i, p := range plugins {
		l := &c.links[i]
		l.name = p.Name
		_, l.ownSteps = p.Plugin.(StepRecorder)
		l.mutator, _ = p.Plugin.(Mutator)
		l.validator, _ = p.Plugin.(Validator)
		l.scoped, _ = p.Plugin.(Scoped)
		l.stepName, l.compact = internStepName(p.Name)
	}
	for i, op := range []Operation{Create, Update, Delete, Connect} {
		for j := range c.links {
			l := &c.links[j]
			if l.mutator != nil && l.mutator.Handles(op) {
				c.admitting[i] = append(c.admitting[i], l)
			}
			if l.validator != nil && l.validator.Handles(op) {
				c.validating[i] = append(c.validating[i], l)
			}
		}
		c.stepsHint[i] = stepsOf(c.admitting[i]) + stepsOf(c.validating[i])
	}
	return c
}

// stepsOf is the number of trace steps plugins leave in one pass of a
// phase: one each, and some room for the webhooks and policies of a plugin
// that records its own.
func stepsOf(phase []*link) int {
	n := 0
	for _, l := range phase {
		if l.ownSteps {
			n += ownStepsRoom
		} else {
			n++
		}
	}
	return n
}

// WithMetrics makes the chain observe step and per-plugin latencies.
func (c *Chain) WithMetrics(m *Metrics) *Chain {
	c.metrics = m
	var series []pluginSeries
	if m != nil {
		series = make([]pluginSeries, len(c.links))
	}
	for i := range c.links {
		c.links[i].series = nil
		if m != nil {
			c.links[i].series = &series[i]
		}
	}
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

// observe records the plugin's latency on an operation (operationIndex) in
// a phase.
func (c *Chain) observe(l *link, took time.Duration, rejected bool, op Operation, opIndex, phase int) {
	if l.series == nil {
		return
	}
	rej := 0
	if rejected {
		rej = 1
	}
	slot := &l.series[opIndex][phase][rej]
	s := slot.Load()
	if s == nil {
		s = c.metrics.controllerSeries(rejected, op, phaseNames[phase], l.name)
		slot.Store(s)
	}
	s.observe(took)
}

// Plugins returns the plugins of the chain in order.
func (c *Chain) Plugins() []NamedPlugin { return c.plugins }

// Handles reports whether any plugin handles op (from the lists built with
// the chain for the four operations; the server asks on every write).
func (c *Chain) Handles(op Operation) bool {
	switch op {
	case Create, Update, Delete, Connect:
		i := operationIndex(op)
		return len(c.admitting[i]) > 0 || len(c.validating[i]) > 0
	}
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
	opIndex := operationIndex(a.Operation)
	for _, l := range c.admitting[opIndex] {
		if l.scoped != nil && !l.scoped.Concerns(a) {
			c.skip(a, &steps, l, opIndex, admitPhase, round)
			continue
		}
		if l.ownSteps {
			steps.flush(a.Record)
		}
		err := l.mutator.Admit(ctx, a)
		now := monotonicNow()
		took := now - mark
		mark = now
		c.observe(l, took, err != nil, a.Operation, opIndex, admitPhase)
		var change *StepDetail
		if changes.on {
			if base, after, changed := changes.check(a); changed {
				change = &StepDetail{Base: base, After: after}
			}
			mark = monotonicNow()
		}
		c.addPluginStep(a, &steps, l, admitPhase, round, took, err, change)
		if err != nil {
			c.rejected(a, l)
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
	opIndex := operationIndex(a.Operation)
	for _, l := range c.validating[opIndex] {
		if l.scoped != nil && !l.scoped.Concerns(a) {
			c.skip(a, &steps, l, opIndex, validatePhase, 0)
			continue
		}
		if l.ownSteps {
			steps.flush(a.Record)
		}
		err := l.validator.Validate(ctx, a)
		now := monotonicNow()
		took := now - mark
		mark = now
		c.observe(l, took, err != nil, a.Operation, opIndex, validatePhase)
		c.addPluginStep(a, &steps, l, validatePhase, 0, took, err, nil)
		if err != nil {
			c.rejected(a, l)
			return err
		}
	}
	return nil
}

// addPluginStep leaves the trace step of a plugin that records none of its
// own: its name, the phase as Reason, the pass (round 1 is the mutating
// phase's second pass), the time it took and its error; change, when not
// nil, is how it changed the object (verbose traces only), which marks the
// step Mutated.
func (c *Chain) addPluginStep(a *Attributes, steps *pendingSteps, l *link, phase, round int, took time.Duration, err error, change *StepDetail) {
	if a.Record == nil || l.ownSteps {
		return
	}
	if err == nil && change == nil && l.compact {
		steps.add(a.Record, pluginStepRef(l.stepName, phase == validatePhase, round, took))
		return
	}
	steps.flush(a.Record)
	s := Step{Plugin: l.name, Matched: true, Reason: phaseNames[phase], Round: round, Duration: took,
		Mutated: change != nil, Detail: change}
	if err != nil {
		s.Err = err.Error()
	}
	a.Record.AddStep(s)
}

// skip counts a plugin that does not look at the request in its metric and
// leaves its step, skipped with reason SkipResource.
func (c *Chain) skip(a *Attributes, steps *pendingSteps, l *link, opIndex, phase, round int) {
	c.observe(l, 0, false, a.Operation, opIndex, phase)
	if a.Record == nil || l.ownSteps {
		return
	}
	if l.compact {
		steps.add(a.Record, skippedStepRef(l.stepName, phase == validatePhase, round))
		return
	}
	steps.flush(a.Record)
	a.Record.AddStep(Step{Plugin: l.name, Reason: phaseNames[phase], Round: round, Skip: SkipResource})
}

// rejected notes in the record that the plugin ended admission.
func (c *Chain) rejected(a *Attributes, l *link) {
	if a.Record != nil {
		a.Record.markRejected(l.name)
	}
}
