package webhooks

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/admission"
	admcel "github.com/admitd/admitd/pkg/admission/cel"
	"github.com/admitd/admitd/pkg/admission/match"
)

// compiledHook is the precompiled matching part of a hook.
type compiledHook struct {
	criteria *match.Criteria
}

func (h *hook) compile() *compiledHook {
	h.compileOnce.Do(func() {
		h.compiled = &compiledHook{criteria: match.Webhook(h.Rules, h.MatchPolicy, h.NamespaceSelector, h.ObjectSelector)}
	})
	return h.compiled
}

// hookList is an ordered list of hooks with its match index.
type hookList struct {
	hooks []*hook
	index *match.Index
}

func newHookList(hooks []*hook) hookList {
	criteria := make([]*match.Criteria, len(hooks))
	for i, h := range hooks {
		criteria[i] = h.compile().criteria
	}
	return hookList{hooks: hooks, index: match.NewIndex(criteria)}
}

// candidates returns the hooks whose rules could match the request, in order.
func (l hookList) candidates(mr *match.Request) []*hook {
	if len(l.hooks) == 0 {
		return nil
	}
	var buf [16]int32
	idx := l.index.Candidates(mr, buf[:0])
	out := make([]*hook, len(idx))
	for i, n := range idx {
		out[i] = l.hooks[n]
	}
	return out
}

// matchEnv is the matching environment of the dispatcher.
func (d *dispatcher) matchEnv() match.Env {
	return match.Env{Namespaces: d.namespaces, Equivalents: d.schema}
}

// shouldCall decides whether h is called for the request; nil means skip.
// Errors (a missing namespace, a bad selector, a failed condition under
// failurePolicy Fail) end the request. matchConditions run last, against
// the objects in the invocation's kind.
func (d *dispatcher) shouldCall(ctx context.Context, mr *match.Request, h *hook, a *admission.Attributes) (*invocation, error) {
	c := h.compile().criteria
	dec := c.Match(mr)
	switch dec.Reason {
	case match.Matched:
	case match.Errored:
		return nil, dec.Err
	default:
		d.skipped(a, h, dec.Reason.SkipName(), c.Why(mr, dec), nil)
		return nil, nil
	}
	inv := &invocation{Resource: dec.Resource, Subresource: dec.Subresource, Kind: dec.Kind, Object: a.Object, OldObject: a.OldObject}
	if dec.Kind != a.Kind {
		var err error
		if inv.Object, err = d.convert(a.Object, dec); err != nil {
			return nil, err
		}
		if inv.OldObject, err = d.convert(a.OldObject, dec); err != nil {
			return nil, err
		}
	}
	if len(h.MatchConditions) > 0 {
		return d.matchConditions(ctx, h, a, inv)
	}
	return inv, nil
}

// compiledConditions returns the hook's compiled matchConditions, compiling
// them on first use.
func (h *hook) compiledConditions(c *admcel.Compiler) *admcel.MatchConditions {
	h.conditionsOnce.Do(func() {
		h.conditions = c.CompileMatchConditions(h.MatchConditions, admcel.CompileOptions{HasAuthorizer: true}, h.FailurePolicy)
	})
	return h.conditions
}

// matchConditions evaluates the hook's matchConditions for inv: a false
// condition (or an error under failurePolicy Ignore) skips the hook; an
// error under Fail rejects the request with a 403 named, as upstream names
// it, after the request resource and the bare request name. As upstream,
// request.resource is the request's own resource, request.kind the
// invocation's.
func (d *dispatcher) matchConditions(ctx context.Context, h *hook, a *admission.Attributes, inv *invocation) (*invocation, error) {
	res := h.compiledConditions(d.cel).Match(ctx, admcel.Input{
		Attributes: a, Kind: inv.Kind, Resource: a.Resource,
		Object: inv.Object, OldObject: inv.OldObject, Authorizer: d.authorizer,
	})
	res.Observe(d.metrics, h.Name, "webhook", d.webhookType(), a.Operation)
	if res.Err != nil {
		d.log.Warn("failed evaluating match conditions, failing closed", "webhook", h.Name, "err", res.Err)
		d.skipped(a, h, admission.SkipMatchCondition, conditionWhy(h, res), res.Err)
		return nil, apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, res.Err)
	}
	if !res.Matches {
		d.skipped(a, h, admission.SkipMatchCondition, conditionWhy(h, res), nil)
		d.metrics.ObserveMatchConditionExclusion(h.Name, "webhook", d.exclusionType(), a.Operation)
		return nil, nil
	}
	return inv, nil
}

// webhookType is the type label of the webhook metrics: "admit" or
// "validating".
func (d *dispatcher) webhookType() string {
	if d.name == MutatingName {
		return "admit"
	}
	return "validating"
}

// exclusionType is the type label of match_condition_exclusions_total,
// which upstream takes from the webhook accessor: "admit" or "validate".
func (d *dispatcher) exclusionType() string {
	if d.name == MutatingName {
		return "admit"
	}
	return "validate"
}

// skipped records in the trace a hook that was not called: skip names the
// check (admission.Skip*), why explains it.
func (d *dispatcher) skipped(a *admission.Attributes, h *hook, skip string, why admission.Explainer, err error) {
	step := admission.Step{Plugin: d.name, Name: h.Name, Config: h.Config, Reason: "skipped", Skip: skip,
		Detail: &admission.StepDetail{Why: why, FailurePolicy: failurePolicyOf(h)}}
	if d.name == MutatingName && a.Record.IsReinvoke() {
		step.Round = 1 // the validating phase has one round, after the mutating phase's last
	}
	if err != nil {
		step.Err = err.Error()
	}
	a.Record.AddStep(step)
}

// conditionWhy explains a matchConditions outcome that skipped or failed
// a hook: the condition that was false, with its expression, or the
// evaluation error and the failure policy applied. It formats only when
// the trace is read.
func conditionWhy(h *hook, res admcel.MatchResult) admission.Explainer {
	return &conditionOutcome{h: h, failed: res.FailedCondition, err: res.Err}
}

type conditionOutcome struct {
	h      *hook
	failed string
	err    error
}

func (c *conditionOutcome) Explain() string {
	if c.err != nil {
		return fmt.Sprintf("matchConditions failed to evaluate, failurePolicy %s: %v", failurePolicyOf(c.h), c.err)
	}
	if c.failed == "" {
		return fmt.Sprintf("matchConditions errored, failurePolicy %s: the hook is skipped", failurePolicyOf(c.h))
	}
	for _, mc := range c.h.MatchConditions {
		if mc.Name == c.failed {
			return fmt.Sprintf("matchCondition %q is false: %s", mc.Name, mc.Expression)
		}
	}
	return fmt.Sprintf("matchCondition %q is false", c.failed)
}

// failurePolicyOf is the hook's failurePolicy as the trace shows it (Fail
// when unset, as the API defaults it).
func failurePolicyOf(h *hook) string {
	if h.failOpen() {
		return "Ignore"
	}
	return "Fail"
}

// visit returns the hooks a request looks at: the candidates of the
// index, or, for a verbose trace, every hook (so that each one out of
// scope is traced with its reason).
func (l hookList) visit(mr *match.Request) []*hook {
	if mr.Attributes().Record.Verbose() {
		return l.hooks
	}
	return l.candidates(mr)
}

func (d *dispatcher) convert(obj runtime.Object, dec match.Decision) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	out, err := d.schema.ConvertTo(obj, dec.Kind)
	if err != nil {
		return nil, internalError(err)
	}
	return out, nil
}
