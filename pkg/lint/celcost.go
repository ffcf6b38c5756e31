package lint

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/admissionregistration/v1"

	admissioncel "github.com/admitd/admitd/pkg/admission/cel"
)

// expression is one CEL expression of an object, with where it is.
// messageOnly: its failure only loses a message (a validation's
// messageExpression: the server falls back to the static message), it
// does not decide the request.
type expression struct {
	field, text string
	messageOnly bool
}

// celLinter estimates expressions with one compiler for a whole run.
type celLinter struct {
	compiler *admissioncel.Compiler
	fraction float64
	schemas  setSchemas
}

// sharedCompiler is made on first use (not at every command's start).
var sharedCompiler = sync.OnceValue(func() *admissioncel.Compiler { return admissioncel.NewCompiler(admissioncel.Options{}) })

// lintCEL reports expressions that do not compile, and those whose
// estimated worst-case cost is above the given fraction of
// StaticEstimatedCostLimit, typed by schemas and the set's CRDs.
func lintCEL(s *Set, fraction float64, schemas Schemas) []Finding {
	l := celLinter{compiler: sharedCompiler(), fraction: fraction, schemas: schemasOf(s, schemas)}
	var out []Finding
	for _, p := range s.ValidatingPolicies {
		out = append(out, l.vap(s.originOf(p), p)...)
	}
	for _, p := range s.MutatingPolicies {
		out = append(out, l.mutatingPolicy(s.originOf(p), p)...)
	}
	for _, c := range s.ValidatingWebhooks {
		for i, w := range c.Webhooks {
			out = append(out, l.matchConditions(s.originOf(c), w.Name, i, w.MatchConditions)...)
		}
	}
	for _, c := range s.MutatingWebhooks {
		for i, w := range c.Webhooks {
			out = append(out, l.matchConditions(s.originOf(c), w.Name, i, w.MatchConditions)...)
		}
	}
	return out
}

// policySource is what estimating a policy's expressions needs of it.
type policySource struct {
	obj       Object
	vars      []v1.Variable
	exprs     []expression
	match     *v1.MatchResources
	paramKind *v1.ParamKind
	opts      admissioncel.CompileOptions
}

func (l celLinter) vap(obj Object, p *v1.ValidatingAdmissionPolicy) []Finding {
	o := admissioncel.CompileOptions{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	var exprs []expression
	for i, v := range p.Spec.Validations {
		exprs = append(exprs, expression{field: fmt.Sprintf("spec.validations[%d].expression", i), text: v.Expression})
		if v.MessageExpression != "" {
			exprs = append(exprs, expression{fmt.Sprintf("spec.validations[%d].messageExpression", i), v.MessageExpression, true})
		}
	}
	for i, a := range p.Spec.AuditAnnotations {
		exprs = append(exprs, expression{field: fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), text: a.ValueExpression})
	}
	exprs = append(exprs, conditionExprs("spec.matchConditions", p.Spec.MatchConditions)...)
	return l.policy(policySource{obj, p.Spec.Variables, exprs, p.Spec.MatchConstraints, p.Spec.ParamKind, o})
}

func (l celLinter) mutatingPolicy(obj Object, p *v1.MutatingAdmissionPolicy) []Finding {
	o := admissioncel.CompileOptions{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true, HasPatchTypes: true}
	var exprs []expression
	for i, m := range p.Spec.Mutations {
		if m.ApplyConfiguration != nil {
			exprs = append(exprs, expression{field: fmt.Sprintf("spec.mutations[%d].applyConfiguration.expression", i), text: m.ApplyConfiguration.Expression})
		}
		if m.JSONPatch != nil {
			exprs = append(exprs, expression{field: fmt.Sprintf("spec.mutations[%d].jsonPatch.expression", i), text: m.JSONPatch.Expression})
		}
	}
	exprs = append(exprs, conditionExprs("spec.matchConditions", p.Spec.MatchConditions)...)
	return l.policy(policySource{obj, p.Spec.Variables, exprs, p.Spec.MatchConstraints, p.Spec.ParamKind, o})
}

// policy estimates a policy's variables and expressions in the
// composition of its variables: compiled as the server compiles them
// (object dyn), estimated typed by each matched kind's schema.
func (l celLinter) policy(p policySource) []Finding {
	cvars := make([]admissioncel.Variable, len(p.vars))
	var all []expression
	for i, v := range p.vars {
		cvars[i] = admissioncel.Variable{Name: v.Name, Expression: v.Expression}
		all = append(all, expression{field: fmt.Sprintf("spec.variables[%d].expression", i), text: v.Expression})
	}
	comp := l.compiler.Compose(cvars, p.opts)
	typed := l.typedEstimators(cvars, p)
	var out []Finding
	for _, e := range append(all, p.exprs...) {
		est, err := comp.EstimateCost(e.text, p.opts)
		if err != nil {
			out = append(out, compileFinding(p.obj, "", e, err))
			continue
		}
		out = append(out, l.costFinding(p.obj, "", e, worstTyped(typed, e.text, est))...)
	}
	return out
}

func (l celLinter) matchConditions(obj Object, webhook string, index int, conds []v1.MatchCondition) []Finding {
	o := admissioncel.CompileOptions{HasAuthorizer: true}
	var out []Finding
	for _, e := range conditionExprs(fmt.Sprintf("webhooks[%d].matchConditions", index), conds) {
		est, err := l.compiler.EstimateCost(e.text, o)
		if err != nil {
			out = append(out, compileFinding(obj, webhook, e, err))
			continue
		}
		out = append(out, l.costFinding(obj, webhook, e, cost{CostEstimate: est})...)
	}
	return out
}

func conditionExprs(prefix string, conds []v1.MatchCondition) []expression {
	out := make([]expression, len(conds))
	for i, c := range conds {
		out[i] = expression{field: fmt.Sprintf("%s[%d].expression", prefix, i), text: c.Expression}
	}
	return out
}

func compileFinding(obj Object, webhook string, e expression, err error) Finding {
	return newFinding(CELCompileError, Error, obj, webhook, e.field, fmt.Sprintf("%s: %v", e.field, err))
}

// costFinding reports c when it is above the fraction of the limit: a
// warning above StaticEstimatedCostLimit, info below, and info for an
// expression whose failure only loses a message.
func (l celLinter) costFinding(obj Object, webhook string, e expression, c cost) []Finding {
	limit := uint64(admissioncel.StaticEstimatedCostLimit)
	if float64(c.Max) <= l.fraction*float64(limit) || (c.kind == nil && !c.Loops) {
		// Without a schema and without a loop the cost is bounded by the
		// size of what the expression reads: an estimate above the limit
		// there only says that an untyped value is taken to be as large as
		// a request.
		return nil
	}
	sev, stake := Info, ""
	switch {
	case e.messageOnly:
		stake = "; only the message is at stake: when this evaluation is stopped, a denial carries the validation's message, or its failed expression, instead"
	case c.Max > limit:
		sev = Warning
	}
	return []Finding{newFinding(CELNearCostLimit, sev, obj, webhook, e.field,
		fmt.Sprintf("%s has an estimated worst-case cost of %s %s, %s the %d above which kube-apiserver's estimator refuses an expression (as it refuses a CRD validation rule; a policy is not refused, but each evaluation stops at %d)%s: %s",
			e.field, costString(c.Max), c.sizedBy(), share(c.Max, limit), limit, admissioncel.PerCallLimit, stake, e.text))}
}

func costString(c uint64) string {
	if c == ^uint64(0) {
		return "unbounded"
	}
	return fmt.Sprint(c)
}

// share says how c compares with limit: "75% of" or "1234 times".
func share(c, limit uint64) string {
	if c < limit {
		return fmt.Sprintf("%.0f%% of", 100*float64(c)/float64(limit))
	}
	if c/limit > 1_000_000 {
		return "over a million times"
	}
	return fmt.Sprintf("%.1f times", float64(c)/float64(limit))
}
