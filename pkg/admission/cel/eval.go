package cel

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/google/cel-go/common/types/ref"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// Result is the outcome of one expression.
type Result struct {
	// Value is the result when Err is nil.
	Value ref.Val
	// Err is the expression's error (an *apiservercel.Error): a compile
	// error ("compilation error: compilation failed: …") or a runtime one
	// ("expression '<expr>' resulted in error: …").
	Err     error
	Elapsed time.Duration
}

// errOutOfBudget is upstream's error when the shared budget runs out.
func errOutOfBudget() error {
	return &apiservercel.Error{
		Type:   apiservercel.ErrorTypeInvalid,
		Detail: "validation failed due to running out of cost budget, no further validation rules will be run",
		Cause:  apiservercel.ErrOutOfBudget,
	}
}

// Eval evaluates p against act, charging its cost to budget, and returns
// the result and the remaining budget. The expression's own failures are in
// the Result; a non-nil error means evaluation must stop (the budget ran
// out, or the cost could not be measured).
func (p *Program) Eval(ctx context.Context, act *Activation, budget int64) (Result, int64, error) {
	if p.err != nil {
		return Result{Err: &apiservercel.Error{
			Type: apiservercel.ErrorTypeInvalid, Detail: fmt.Sprintf("compilation error: %v", p.err), Cause: p.err,
		}}, budget, nil
	}
	if p.program == nil {
		return Result{Err: &apiservercel.Error{
			Type: apiservercel.ErrorTypeInternal, Detail: "unexpected internal error compiling expression",
		}}, budget, nil
	}
	start := time.Now()
	val, details, err := p.program.ContextEval(ctx, act)
	res := Result{Elapsed: time.Since(start)}
	// Variables evaluated on the way are charged first, as upstream.
	if vc := act.takeVariablesCost(); vc > 0 {
		if vc > budget {
			return res, -1, errOutOfBudget()
		}
		budget -= vc
	}
	if details == nil {
		return res, -1, &apiservercel.Error{
			Type:   apiservercel.ErrorTypeInternal,
			Detail: fmt.Sprintf("runtime cost could not be calculated for expression: %v, no further expression will be run", p.expression),
		}
	}
	cost := details.ActualCost()
	if cost == nil {
		return res, -1, &apiservercel.Error{
			Type:   apiservercel.ErrorTypeInvalid,
			Detail: fmt.Sprintf("runtime cost could not be calculated for expression: %v, no further expression will be run", p.expression),
			Cause:  apiservercel.ErrOutOfBudget,
		}
	}
	if *cost > math.MaxInt64 || int64(*cost) > budget {
		return res, -1, errOutOfBudget()
	}
	budget -= int64(*cost)
	if err != nil {
		res.Err = &apiservercel.Error{
			Type:   apiservercel.ErrorTypeInvalid,
			Detail: fmt.Sprintf("expression '%v' resulted in error: %v", p.expression, err),
		}
		return res, budget, nil
	}
	res.Value = val
	return res, budget, nil
}

// EvalAll evaluates programs in order against one activation, sharing
// budget, and returns their results and the remaining budget. It stops at
// the first evaluator failure (see Program.Eval).
func EvalAll(ctx context.Context, programs []*Program, act *Activation, budget int64) ([]Result, int64, error) {
	out := make([]Result, len(programs))
	for i, p := range programs {
		var err error
		if out[i], budget, err = p.Eval(ctx, act, budget); err != nil {
			return nil, -1, err
		}
	}
	return out, budget, nil
}

// takeVariablesCost returns and resets the cost of the variables evaluated
// since the last call.
func (a *Activation) takeVariablesCost() int64 {
	c := a.varCost
	a.varCost = 0
	return c
}
