package cel

import (
	"context"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/admitd/admitd/pkg/admission"
)

// MatchConditions are the compiled matchConditions of one webhook or
// policy, with the failure policy that decides what their errors do.
type MatchConditions struct {
	names    []string
	programs []*Program
	policy   admissionregistrationv1.FailurePolicyType
	// comp binds the policy's variables; nil for webhooks.
	comp *Composition
}

// CompileMatchConditions compiles conditions as bool expressions with the
// declarations of o (webhooks: HasAuthorizer; policies: HasAuthorizer and
// HasParams when they have a paramKind). A nil failure policy is Fail.
// Compilation errors are not returned: they surface when Match runs.
func (c *Compiler) CompileMatchConditions(conds []admissionregistrationv1.MatchCondition, o CompileOptions, policy *admissionregistrationv1.FailurePolicyType) *MatchConditions {
	o.ResultTypes = []*cel.Type{cel.BoolType}
	m := &MatchConditions{policy: admissionregistrationv1.Fail}
	if policy != nil {
		m.policy = *policy
	}
	for _, mc := range conds {
		m.names = append(m.names, mc.Name)
		m.programs = append(m.programs, c.Compile(mc.Expression, o))
	}
	return m
}

// CompileMatchConditions compiles a policy's matchConditions in its
// composition, as CompileMatchConditions does for webhooks.
func (k *Composition) CompileMatchConditions(conds []admissionregistrationv1.MatchCondition, o CompileOptions, policy *admissionregistrationv1.FailurePolicyType) *MatchConditions {
	o.ResultTypes = []*cel.Type{cel.BoolType}
	m := &MatchConditions{policy: admissionregistrationv1.Fail, comp: k}
	if policy != nil {
		m.policy = *policy
	}
	for _, mc := range conds {
		m.names = append(m.names, mc.Name)
		m.programs = append(m.programs, k.Compile(mc.Expression, o))
	}
	return m
}

// Len is the number of conditions.
func (m *MatchConditions) Len() int { return len(m.names) }

// MatchResult is the verdict of a set of matchConditions.
type MatchResult struct {
	// Matches is true when the webhook or policy applies.
	Matches bool
	// FailedCondition names the condition that evaluated to false.
	FailedCondition string
	// Err is set when the request must be rejected: conditions errored (or
	// the evaluator failed) under failure policy Fail. Several expression
	// errors are aggregated as "[e1, e2]", duplicates removed.
	Err error
	// EvalErrors counts the conditions that evaluated with an error
	// (apiserver_admission_match_condition_evaluation_errors_total).
	EvalErrors int
	// Elapsed is the time spent evaluating.
	Elapsed time.Duration
}

// Match evaluates every condition in order with the shared
// MatchConditionsBudget, as upstream does: a condition that is false skips
// (whatever the others did); otherwise errors follow the failure policy
// (Fail rejects, Ignore skips); otherwise it matches.
func (m *MatchConditions) Match(ctx context.Context, in Input) MatchResult {
	start := time.Now()
	results, err := m.eval(ctx, in)
	if err != nil {
		return m.onError(MatchResult{Elapsed: time.Since(start)}, err)
	}
	var errs []error
	for i, r := range results {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
		if r.Value == types.False {
			return MatchResult{FailedCondition: m.names[i], EvalErrors: len(errs), Elapsed: time.Since(start)}
		}
	}
	res := MatchResult{Matches: true, EvalErrors: len(errs), Elapsed: time.Since(start)}
	if len(errs) > 0 {
		return m.onError(res, utilerrors.NewAggregate(errs))
	}
	return res
}

// Observe records r in the shared match-condition metrics under name, kind
// ("webhook" or "policy") and typ: the expressions that evaluated with an
// error and, as upstream, the evaluation time only when evaluation ended
// in a skip or an error (not when every condition held).
func (r MatchResult) Observe(m *admission.Metrics, name, kind, typ string, op admission.Operation) {
	m.ObserveMatchConditionEvalErrors(name, kind, typ, op, r.EvalErrors)
	if !r.Matches || r.Err != nil || r.EvalErrors > 0 {
		m.ObserveMatchConditionEvaluationTime(r.Elapsed, name, kind, typ, op)
	}
}

func (m *MatchConditions) eval(ctx context.Context, in Input) ([]Result, error) {
	if len(m.programs) == 0 {
		return nil, nil
	}
	var act *Activation
	var err error
	if m.comp != nil {
		act, err = m.comp.NewActivation(ctx, in)
	} else {
		act, err = NewActivation(in)
	}
	if err != nil {
		return nil, err
	}
	results, _, err := EvalAll(ctx, m.programs, act, MatchConditionsBudget)
	return results, err
}

// onError applies the failure policy to err. A policy other than Fail and
// Ignore (which API validation refuses) leaves res as it is.
func (m *MatchConditions) onError(res MatchResult, err error) MatchResult {
	switch m.policy {
	case admissionregistrationv1.Fail:
		res.Matches, res.Err = false, err
	case admissionregistrationv1.Ignore:
		res.Matches = false
	default:
		res.Matches = true
	}
	return res
}
