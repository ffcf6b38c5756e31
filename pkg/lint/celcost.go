package lint

import (
	"fmt"

	v1 "k8s.io/api/admissionregistration/v1"

	admissioncel "github.com/admitd/admitd/pkg/admission/cel"
)

// expression is one CEL expression of an object, with where it is.
type expression struct {
	field, text string
}

// celLinter estimates expressions with one compiler for a whole run.
type celLinter struct {
	compiler *admissioncel.Compiler
	fraction float64
}

var sharedCompiler = admissioncel.NewCompiler(admissioncel.Options{})

// lintCEL reports expressions that do not compile or whose worst-case
// cost is above fraction of the per-expression limit.
func lintCEL(s *Set, fraction float64) []Finding {
	l := celLinter{compiler: sharedCompiler, fraction: fraction}
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

func (l celLinter) vap(obj Object, p *v1.ValidatingAdmissionPolicy) []Finding {
	o := admissioncel.CompileOptions{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	var exprs []expression
	for i, v := range p.Spec.Validations {
		exprs = append(exprs, expression{fmt.Sprintf("spec.validations[%d].expression", i), v.Expression})
		if v.MessageExpression != "" {
			exprs = append(exprs, expression{fmt.Sprintf("spec.validations[%d].messageExpression", i), v.MessageExpression})
		}
	}
	for i, a := range p.Spec.AuditAnnotations {
		exprs = append(exprs, expression{fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), a.ValueExpression})
	}
	exprs = append(exprs, conditionExprs("spec.matchConditions", p.Spec.MatchConditions)...)
	return l.policy(obj, p.Spec.Variables, exprs, o)
}

func (l celLinter) mutatingPolicy(obj Object, p *v1.MutatingAdmissionPolicy) []Finding {
	o := admissioncel.CompileOptions{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true, HasPatchTypes: true}
	var exprs []expression
	for i, m := range p.Spec.Mutations {
		if m.ApplyConfiguration != nil {
			exprs = append(exprs, expression{fmt.Sprintf("spec.mutations[%d].applyConfiguration.expression", i), m.ApplyConfiguration.Expression})
		}
		if m.JSONPatch != nil {
			exprs = append(exprs, expression{fmt.Sprintf("spec.mutations[%d].jsonPatch.expression", i), m.JSONPatch.Expression})
		}
	}
	exprs = append(exprs, conditionExprs("spec.matchConditions", p.Spec.MatchConditions)...)
	return l.policy(obj, p.Spec.Variables, exprs, o)
}

// policy estimates a policy's variables and expressions in the
// composition of its variables.
func (l celLinter) policy(obj Object, vars []v1.Variable, exprs []expression, o admissioncel.CompileOptions) []Finding {
	cvars := make([]admissioncel.Variable, len(vars))
	var all []expression
	for i, v := range vars {
		cvars[i] = admissioncel.Variable{Name: v.Name, Expression: v.Expression}
		all = append(all, expression{fmt.Sprintf("spec.variables[%d].expression", i), v.Expression})
	}
	comp := l.compiler.Compose(cvars, o)
	var out []Finding
	for _, e := range append(all, exprs...) {
		est, err := comp.EstimateCost(e.text, o)
		out = append(out, l.finding(obj, "", e, est, err)...)
	}
	return out
}

func (l celLinter) matchConditions(obj Object, webhook string, index int, conds []v1.MatchCondition) []Finding {
	o := admissioncel.CompileOptions{HasAuthorizer: true}
	var out []Finding
	for _, e := range conditionExprs(fmt.Sprintf("webhooks[%d].matchConditions", index), conds) {
		est, err := l.compiler.EstimateCost(e.text, o)
		out = append(out, l.finding(obj, webhook, e, est, err)...)
	}
	return out
}

func conditionExprs(prefix string, conds []v1.MatchCondition) []expression {
	out := make([]expression, len(conds))
	for i, c := range conds {
		out[i] = expression{fmt.Sprintf("%s[%d].expression", prefix, i), c.Expression}
	}
	return out
}

func (l celLinter) finding(obj Object, webhook string, e expression, est admissioncel.CostEstimate, err error) []Finding {
	if err != nil {
		return []Finding{newFinding(CELCompileError, Error, obj, webhook, e.field, fmt.Sprintf("%s: %v", e.field, err))}
	}
	limit := uint64(admissioncel.PerCallLimit)
	if float64(est.Max) <= l.fraction*float64(limit) || !est.Loops {
		// Without a loop the cost is bounded by the size of what the
		// expression reads: an estimate above the limit there only says
		// that an untyped value is taken to be as large as a request.
		return nil
	}
	sev := Info
	if est.Max > limit {
		sev = Warning
	}
	return []Finding{newFinding(CELNearCostLimit, sev, obj, webhook, e.field,
		fmt.Sprintf("%s has an estimated worst-case cost of %s, %s the per-expression limit of %d (lists and strings as large as a 3 MiB request allows): %s",
			e.field, costString(est.Max), share(est.Max, limit), limit, e.text))}
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
