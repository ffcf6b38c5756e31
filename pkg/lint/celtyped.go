package lint

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	admissioncel "github.com/admitd/admitd/pkg/admission/cel"
	"github.com/admitd/admitd/pkg/admission/policyschema"
)

// cost is an expression's estimate and what sized it: kind is the
// matched kind whose schema gave the worst estimate, nil when no schema
// typed the expression.
type cost struct {
	admissioncel.CostEstimate
	kind *schema.GroupVersionKind
}

// sizedBy says in a message what the estimate assumed.
func (c cost) sizedBy() string {
	if c.kind == nil {
		return "(no schema for what it reads: lists and strings as large as a 3 MiB request allows)"
	}
	if c.kind.Empty() {
		return "(params sized by their schema, object by the 3 MiB request)"
	}
	apiVersion, kind := c.kind.ToAPIVersionAndKind()
	return fmt.Sprintf("for %s %s (sized by its schema)", apiVersion, kind)
}

// kindEstimator estimates expressions with object typed as one kind.
type kindEstimator struct {
	kind schema.GroupVersionKind // empty: object untyped, params typed
	est  *admissioncel.TypedEstimator
}

// typedEstimators returns an estimator per matched kind that has a schema,
// as upstream's type checker chooses them (explicit resource rules, at
// most ten kinds), with params typed by the paramKind's schema; one with
// object untyped when only params have a schema; none when nothing does.
func (l celLinter) typedEstimators(vars []admissioncel.Variable, p policySource) []kindEstimator {
	var params *admissioncel.Types
	if pk := p.paramKind; pk != nil {
		if gv, err := schema.ParseGroupVersion(pk.APIVersion); err == nil {
			if t := policyschema.KindDeclType(l.schemas, gv.WithKind(pk.Kind)); t != nil {
				params = &admissioncel.Types{Params: t}
			}
		}
	}
	var out []kindEstimator
	add := func(gvk schema.GroupVersionKind, t admissioncel.Types) {
		if est, err := l.compiler.TypedEstimator(vars, p.opts, t); err == nil {
			out = append(out, kindEstimator{gvk, est})
		}
	}
	for _, gvk := range policyschema.MatchedKinds(p.match, l.schemas.KindsFor) {
		if object := policyschema.KindDeclType(l.schemas, gvk); object != nil {
			t := admissioncel.Types{Object: object}
			if params != nil {
				t.Params = params.Params
			}
			add(gvk, t)
		}
	}
	if len(out) == 0 && params != nil {
		add(schema.GroupVersionKind{}, *params)
	}
	return out
}

// worstTyped is the highest estimate of expr among the kinds it compiles
// for, or untyped when it compiles for none (e.g. a field a schema does
// not declare: the server evaluates it untyped all the same).
func worstTyped(ests []kindEstimator, expr string, untyped admissioncel.CostEstimate) cost {
	var worst *cost
	for _, k := range ests {
		est, err := k.est.EstimateCost(expr)
		if err != nil {
			continue
		}
		if worst == nil || est.Max > worst.Max {
			worst = &cost{est, &k.kind}
		}
	}
	if worst == nil {
		return cost{CostEstimate: untyped}
	}
	return *worst
}
