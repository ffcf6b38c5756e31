package policies

import (
	"fmt"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

// visit returns the positions of the hooks a request looks at: the
// candidates of the index, or, for a verbose trace, every hook (so that
// each policy out of scope is traced with its reason).
func (s *hookSet) visit(mr *match.Request, buf []int32) []int32 {
	if !mr.Attributes().Record.Verbose() {
		return s.candidates(mr, buf)
	}
	out := buf[:0]
	for i := range s.hooks {
		out = append(out, int32(i))
	}
	return out
}

// traceSkip records a policy (b nil) or one of its bindings that does not
// match the request, with the check that excluded it.
func traceSkip(plugin string, mr *match.Request, h *hook, b *binding, dec match.Decision) {
	a := mr.Attributes()
	if a.Record == nil {
		return
	}
	c, config := h.criteria, ""
	if b != nil {
		c, config = b.criteria, b.name
	}
	s := admission.Step{Plugin: plugin, Name: h.name, Config: config, Reason: "skipped", Skip: dec.Reason.SkipName(),
		Detail: &admission.StepDetail{Why: c.Why(mr, dec), FailurePolicy: string(h.failurePolicy)}}
	if plugin == MutatingName && a.Record.IsReinvoke() {
		s.Round = 1 // the validating phase has one round, after the mutating phase's last
	}
	a.Record.AddStep(s)
}

// traceConfigError records a policy or binding whose configuration failed
// for this request (the failurePolicy decides what that means).
func traceConfigError(plugin string, a *admission.Attributes, h *hook, b *binding, err error) {
	if a.Record == nil {
		return
	}
	s := admission.Step{Plugin: plugin, Name: h.name, Matched: true, Reason: "configuration error", Err: err.Error(),
		Detail: &admission.StepDetail{FailurePolicy: string(h.failurePolicy), FailedOpen: h.ignores()}}
	if b != nil {
		s.Config = b.name
	}
	a.Record.AddStep(s)
}

// traceNoParams records a binding whose paramRef selected no params
// (with parameterNotFoundAction Allow): it is not evaluated.
func traceNoParams(plugin string, a *admission.Attributes, h *hook, b *binding) {
	if a.Record == nil {
		return
	}
	a.Record.AddStep(admission.Step{Plugin: plugin, Name: h.name, Config: b.name, Reason: "skipped", Skip: admission.SkipParams,
		Detail: &admission.StepDetail{Why: admission.Explanation("the binding's paramRef selects no params; parameterNotFoundAction Allow"),
			FailurePolicy: string(h.failurePolicy)}})
}

// traceSkipped records an invocation of a policy binding that did not run.
func traceSkipped(plugin string, a *admission.Attributes, h *hook, b *binding, skip string, why admission.Explainer) {
	if a.Record == nil {
		return
	}
	s := admission.Step{Plugin: plugin, Name: h.name, Config: b.name, Reason: "skipped", Skip: skip,
		Detail: &admission.StepDetail{Why: why, FailurePolicy: string(h.failurePolicy)}}
	if plugin == MutatingName && a.Record.IsReinvoke() {
		s.Round = 1
	}
	a.Record.AddStep(s)
}

// conditionFalse explains a policy skipped by the matchCondition it names
// (empty: a condition failed to evaluate under failurePolicy Ignore).
type conditionFalse string

func (c conditionFalse) Explain() string {
	if c == "" {
		return "matchConditions errored, failurePolicy Ignore: the policy is skipped"
	}
	return fmt.Sprintf("matchCondition %q is false", string(c))
}

// notReinvoked explains an invocation the reinvocation pass does not run.
func notReinvoked(ifNeeded bool) admission.Explainer {
	if ifNeeded {
		return admission.Explanation("reinvocationPolicy IfNeeded: the object did not change after this policy's first run")
	}
	return admission.Explanation("reinvocationPolicy Never: run once, in the first pass")
}
