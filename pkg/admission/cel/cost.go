package cel

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"k8s.io/apiserver/pkg/cel/library"
)

// MaxRequestBytes is the largest body kube-apiserver accepts (3 MiB); it
// bounds the size of any string, list or map an admission expression reads
// from a request when nothing else does.
const MaxRequestBytes = 3 * 1024 * 1024

// CostEstimate is the estimated range of an expression's cost, in the
// units of PerCallLimit. Loops says whether the expression iterates (a
// comprehension: all, exists, exists_one, map, filter): only then can its
// cost grow beyond the size of what it reads.
type CostEstimate struct {
	Min, Max uint64
	Loops    bool
}

// EstimateCost compiles expression with o and estimates its cost with the
// Kubernetes libraries' cost model. Admission objects have no schema, so
// every string, list and map whose size the expression does not fix is
// taken to be as large as a 3 MiB request allows: the estimate is a worst
// case. A compilation error is returned as the Program's error would be.
func (c *Compiler) EstimateCost(expression string, o CompileOptions) (CostEstimate, error) {
	env, err := c.Env(o)
	if err != nil {
		return CostEstimate{}, err
	}
	return estimateIn(env, expression, o)
}

// EstimateCost is Compiler.EstimateCost in the composition's environment,
// where the policy's variables are declared.
func (k *Composition) EstimateCost(expression string, o CompileOptions) (CostEstimate, error) {
	k.mu.Lock()
	env, err := k.envLocked(o)
	k.mu.Unlock()
	if err != nil {
		return CostEstimate{}, err
	}
	return estimateIn(env, expression, o)
}

func estimateIn(env *cel.Env, expression string, o CompileOptions) (CostEstimate, error) {
	if p := compileIn(env, expression, o.ResultTypes); p.err != nil {
		return CostEstimate{}, p.err
	}
	ast, issues := env.Compile(expression)
	if issues != nil {
		return CostEstimate{}, issues.Err()
	}
	est, err := env.EstimateCost(ast, &library.CostEstimator{SizeEstimator: requestSizes{}})
	if err != nil {
		return CostEstimate{}, err
	}
	loops := celast.MatchDescendants(celast.NavigateAST(ast.NativeRep()), celast.KindMatcher(celast.ComprehensionKind))
	return CostEstimate{Min: est.Min, Max: est.Max, Loops: len(loops) > 0}, nil
}

// requestSizes bounds unknown sizes by the request size limit: a string of
// at most MaxRequestBytes characters, a list or map of at most half as many
// entries (the shortest JSON entry, with its separator, takes two bytes).
type requestSizes struct{}

func (requestSizes) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	switch n.Type().Kind() {
	case types.StringKind, types.BytesKind:
		return &checker.SizeEstimate{Min: 0, Max: MaxRequestBytes}
	default:
		return &checker.SizeEstimate{Min: 0, Max: MaxRequestBytes / 2}
	}
}

func (requestSizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}
