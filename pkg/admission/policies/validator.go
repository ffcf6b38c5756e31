package policies

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiservercel "k8s.io/apiserver/pkg/cel"

	"github.com/admitd/admitd/pkg/admission"
	admcel "github.com/admitd/admitd/pkg/admission/cel"
)

// Limits of evaluated text, as upstream.
const (
	// maxMessageBytes bounds an evaluated messageExpression; a longer one
	// falls back to the static message.
	maxMessageBytes = 5 * 1024
	// maxAuditValueBytes bounds a published auditAnnotation value.
	maxAuditValueBytes = 10 * 1024
)

// validator is the compiled form of a ValidatingAdmissionPolicy.
type validator struct {
	comp          *admcel.Composition
	conditions    *admcel.MatchConditions // nil without matchConditions
	validations   []*admcel.Program
	messages      []*admcel.Program // nil where no messageExpression
	hasMessages   bool
	audits        []*admcel.Program
	spec          []admissionregistrationv1.Validation
	auditKeys     []string
	failurePolicy admissionregistrationv1.FailurePolicyType
	mc            conditionMetrics
}

// withMetrics has v record its matchConditions in m under name.
func (v *validator) withMetrics(m *admission.Metrics, name string) *validator {
	v.mc = conditionMetrics{m: m, name: name}
	return v
}

var (
	stringOrNull = []*celgo.Type{celgo.StringType, celgo.NullType}
	boolOnly     = []*celgo.Type{celgo.BoolType}
	stringOnly   = []*celgo.Type{celgo.StringType}
)

// compileValidator compiles a policy as upstream does: variables, then
// matchConditions, validations, auditAnnotations and messageExpressions, all
// in the policy's composition (messageExpressions without the authorizer).
func compileValidator(c *admcel.Compiler, p *admissionregistrationv1.ValidatingAdmissionPolicy) *validator {
	spec := &p.Spec
	withAuthz := admcel.CompileOptions{HasParams: spec.ParamKind != nil, HasAuthorizer: true}
	v := &validator{spec: spec.Validations, failurePolicy: admissionregistrationv1.Fail}
	if spec.FailurePolicy != nil {
		v.failurePolicy = *spec.FailurePolicy
	}
	v.comp = c.Compose(variables(spec.Variables), withAuthz)
	if len(spec.MatchConditions) > 0 {
		v.conditions = v.comp.CompileMatchConditions(spec.MatchConditions, withAuthz, spec.FailurePolicy)
	}
	boolOpts, strOpts, auditOpts := withAuthz, withAuthz, withAuthz
	boolOpts.ResultTypes, auditOpts.ResultTypes = boolOnly, stringOrNull
	strOpts.HasAuthorizer, strOpts.ResultTypes = false, stringOnly
	for _, val := range spec.Validations {
		v.validations = append(v.validations, v.comp.Compile(val.Expression, boolOpts))
		var msg *admcel.Program
		if val.MessageExpression != "" {
			msg = v.comp.Compile(val.MessageExpression, strOpts)
			v.hasMessages = true
		}
		v.messages = append(v.messages, msg)
	}
	for _, a := range spec.AuditAnnotations {
		v.auditKeys = append(v.auditKeys, a.Key)
		v.audits = append(v.audits, v.comp.Compile(a.ValueExpression, auditOpts))
	}
	return v
}

func variables(vs []admissionregistrationv1.Variable) []admcel.Variable {
	out := make([]admcel.Variable, len(vs))
	for i, v := range vs {
		out[i] = admcel.Variable{Name: v.Name, Expression: v.Expression}
	}
	return out
}

// evalKind says how a decision came about.
type evalKind uint8

const (
	evalAdmit evalKind = iota
	evalDeny
	evalError
)

// decision is the outcome of one validation (or of a whole evaluation that
// failed): deny is set for a false validation and for an error under
// failurePolicy Fail.
type decision struct {
	deny    bool
	eval    evalKind
	message string
	reason  metav1.StatusReason
	elapsed time.Duration
}

// annotation is the outcome of one auditAnnotation.
type annotation struct {
	key, value string
	publish    bool
	err        string // an error that denies the request
	elapsed    time.Duration
}

// validationResult is what one (policy, binding, param) evaluation gives.
type validationResult struct {
	decisions   []decision
	annotations []annotation
	// falseCondition names the matchCondition that was false (the policy
	// did not apply), for the trace.
	falseCondition string
}

// errorDecision is a failed evaluation under the failure policy.
func (v *validator) errorDecision(msg string) decision {
	return decision{deny: v.failurePolicy != admissionregistrationv1.Ignore, eval: evalError, message: msg}
}

// validate evaluates the policy for one input (one param). in.Namespace
// is the trimmed namespace validations see; auditAnnotations see rawNS.
func (v *validator) validate(ctx context.Context, in admcel.Input, rawNS *corev1.Namespace) validationResult {
	if v.conditions != nil {
		mcIn := in
		mcIn.Namespace = nil
		res := v.conditions.Match(ctx, mcIn)
		v.mc.observe(res, in.Attributes)
		if res.Err != nil {
			return validationResult{decisions: []decision{v.errorDecision(res.Err.Error())}}
		}
		if !res.Matches {
			return validationResult{falseCondition: res.FailedCondition}
		}
	}
	act, err := v.comp.NewActivation(ctx, in)
	if err != nil {
		return validationResult{decisions: []decision{v.errorDecision(err.Error())}}
	}
	results, remaining, err := admcel.EvalAll(ctx, v.validations, act, admcel.RuntimeBudget)
	if err != nil {
		return validationResult{decisions: []decision{v.errorDecision(err.Error())}}
	}
	msgIn := in
	msgIn.Authorizer = nil
	messages, msgErr := v.evalMessages(ctx, msgIn, remaining)
	decisions := make([]decision, len(results))
	for i, r := range results {
		decisions[i] = v.decide(i, r, messages, msgErr)
	}
	auditIn := in
	auditIn.Namespace = rawNS
	annotations, err := v.evalAudits(ctx, auditIn)
	if err != nil {
		return validationResult{decisions: []decision{v.errorDecision(err.Error())}}
	}
	return validationResult{decisions: decisions, annotations: annotations}
}

// decide turns validation i's result into a decision.
func (v *validator) decide(i int, r admcel.Result, messages []admcel.Result, msgErr error) decision {
	d := decision{elapsed: r.Elapsed}
	switch {
	case r.Err != nil:
		e := v.errorDecision(r.Err.Error())
		e.elapsed = r.Elapsed
		return e
	case errors.Is(msgErr, apiservercel.ErrInternal) || errors.Is(msgErr, apiservercel.ErrOutOfBudget):
		e := v.errorDecision(fmt.Sprintf("failed messageExpression: %s", msgErr))
		e.elapsed = r.Elapsed
		return e
	case r.Value != types.True:
		d.deny, d.eval, d.reason = true, evalDeny, metav1.StatusReasonInvalid
		if reason := v.spec[i].Reason; reason != nil {
			d.reason = *reason
		}
		d.message = v.message(i, messages)
	default:
		d.eval = evalAdmit
	}
	return d
}

// message is the denial message of validation i: the messageExpression's
// result if usable, else the message, else the expression.
func (v *validator) message(i int, messages []admcel.Result) string {
	var msg string
	if i < len(messages) && messages[i].Err == nil && messages[i].Value != nil {
		if s, ok := messages[i].Value.Value().(string); ok {
			msg = strings.TrimSpace(s)
			if len(msg) > maxMessageBytes || strings.Contains(msg, "\n") {
				msg = ""
			}
		}
	}
	if msg == "" && v.spec[i].Message != "" {
		msg = strings.TrimSpace(v.spec[i].Message)
	}
	if msg == "" {
		msg = fmt.Sprintf("failed expression: %v", strings.TrimSpace(v.spec[i].Expression))
	}
	return msg
}

// evalMessages evaluates every messageExpression in a new activation
// (variables recomputed, authorizer unbound) with what the validations left
// of the budget. A failure of the evaluation as a whole is returned.
func (v *validator) evalMessages(ctx context.Context, in admcel.Input, budget int64) ([]admcel.Result, error) {
	if !v.hasMessages {
		return nil, nil
	}
	act, err := v.comp.NewActivation(ctx, in)
	if err != nil {
		return nil, err
	}
	out := make([]admcel.Result, len(v.messages))
	for i, p := range v.messages {
		if p == nil {
			continue
		}
		if out[i], budget, err = p.Eval(ctx, act, budget); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// evalAudits evaluates the auditAnnotations with a fresh budget, the raw
// namespace and no authorizer.
func (v *validator) evalAudits(ctx context.Context, in admcel.Input) ([]annotation, error) {
	if len(v.audits) == 0 {
		return nil, nil
	}
	in.Authorizer = nil
	act, err := v.comp.NewActivation(ctx, in)
	if err != nil {
		return nil, err
	}
	results, _, err := admcel.EvalAll(ctx, v.audits, act, admcel.RuntimeBudget)
	if err != nil {
		return nil, err
	}
	out := make([]annotation, len(results))
	for i, r := range results {
		out[i] = v.auditAnnotation(i, r)
	}
	return out, nil
}

func (v *validator) auditAnnotation(i int, r admcel.Result) annotation {
	a := annotation{key: v.auditKeys[i], elapsed: r.Elapsed}
	switch {
	case r.Err != nil:
		if v.failurePolicy != admissionregistrationv1.Ignore {
			a.err = r.Err.Error()
		}
	case r.Value.Type() == types.StringType:
		a.value = strings.TrimSpace(r.Value.Value().(string))
		a.publish = a.value != ""
	case r.Value.Type() == types.NullType:
	default:
		a.err = fmt.Sprintf("valueExpression '%v' resulted in unsupported return type: %v. "+
			"Return type must be either string or null.", v.audits[i].Expression(), r.Value.Type())
	}
	return a
}
