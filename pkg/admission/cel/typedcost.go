package cel

import (
	"slices"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	celast "github.com/google/cel-go/common/ast"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
)

// StaticEstimatedCostLimit is the largest estimated cost kube-apiserver
// accepts for one CEL expression it estimates when the expression is
// written (apiextensions' StaticEstimatedCostLimit, applied to the
// x-kubernetes-validations rules of a CustomResourceDefinition). Admission
// policies are not estimated when written; their evaluation stops at
// PerCallLimit of actual cost.
const StaticEstimatedCostLimit = 10_000_000

// Types gives object and oldObject, and params, the CEL types of their
// kinds' schemas (as upstream's type checker declares them); a nil field
// leaves the variable dyn.
type Types struct {
	Object, Params *apiservercel.DeclType
}

// TypedEstimator estimates the cost of one policy's expressions with
// object, oldObject and params typed, as upstream estimates a CRD's
// validation rules: the size of whatever an expression reads under a typed
// variable comes from its schema (maxItems, maxLength, maxProperties, or
// what the request size limit allows given the smallest serialized
// element), and a path the schema does not size is unbounded. Everything
// else (request, namespaceObject, results of variables that are not plain
// field selections) is bounded by the request size, as EstimateCost does.
type TypedEstimator struct {
	env   *cel.Env
	sizes typedSizes
}

// TypedEstimator returns the estimator of a policy with variables vars,
// declared as o says and typed by t. Variables are typed by their result
// in that environment; a variable that selects a field of a typed
// variable (variables.containers = object.spec.containers) is sized by its
// schema.
func (c *Compiler) TypedEstimator(vars []Variable, o CompileOptions, t Types) (*TypedEstimator, error) {
	set, err := buildEnv(c.base, declsOf(o), t)
	if err != nil {
		return nil, err
	}
	env, err := set.Env(environment.StoredExpressions)
	if err != nil {
		return nil, err
	}
	varType := apiservercel.NewObjectType(variablesTypeName, map[string]*apiservercel.DeclField{})
	if env, err = withVariables(env, varType); err != nil {
		return nil, err
	}
	e := &TypedEstimator{env: env, sizes: typedSizes{roots: map[string]*apiservercel.DeclType{}, vars: map[string]*apiservercel.DeclType{}}}
	if t.Object != nil {
		e.sizes.roots[ObjectVar], e.sizes.roots[OldObjectVar] = t.Object, t.Object
	}
	if t.Params != nil && o.HasParams {
		e.sizes.roots[ParamsVar] = t.Params
	}
	for _, v := range vars {
		var out *cel.Type
		if ast, issues := env.Compile(v.Expression); issues == nil {
			out = ast.OutputType()
			if d := e.sizes.selected(ast.NativeRep().Expr()); d != nil {
				e.sizes.vars[v.Name] = d
			}
		}
		varType.Fields[v.Name] = apiservercel.NewDeclField(v.Name, DeclTypeOf(out), true, nil, nil)
	}
	return e, nil
}

// EstimateCost compiles expression in the typed environment and estimates
// its cost. A compilation error (e.g. a field the schema does not have) is
// returned as is.
func (e *TypedEstimator) EstimateCost(expression string) (CostEstimate, error) {
	ast, issues := e.env.Compile(expression)
	if issues != nil {
		return CostEstimate{}, issues.Err()
	}
	est, err := e.env.EstimateCost(ast, &library.CostEstimator{SizeEstimator: e.sizes})
	if err != nil {
		return CostEstimate{}, err
	}
	loops := celast.MatchDescendants(celast.NavigateAST(ast.NativeRep()), celast.KindMatcher(celast.ComprehensionKind))
	return CostEstimate{Min: est.Min, Max: est.Max, Loops: len(loops) > 0}, nil
}

// typedSizes sizes what expressions read under typed variables by their
// declared types; everything else as requestSizes does.
type typedSizes struct {
	roots map[string]*apiservercel.DeclType // object, oldObject, params
	vars  map[string]*apiservercel.DeclType // variables that select a typed field
}

func (s typedSizes) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	d, typed := s.at(n.Path())
	if !typed {
		return requestSizes{}.EstimateSize(n)
	}
	if d == nil {
		return nil // unbounded, as upstream's estimator has it
	}
	return &checker.SizeEstimate{Min: 0, Max: uint64(max(d.MaxElements, 0))}
}

func (typedSizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// at walks path (a variable, then field names, @items, @keys and @values)
// through the declared types. typed is false when the path does not start
// at a typed variable; d is nil when the types do not go that far.
func (s typedSizes) at(path []string) (d *apiservercel.DeclType, typed bool) {
	if len(path) == 0 {
		return nil, false
	}
	d, rest := s.roots[path[0]], path[1:]
	if path[0] == VariablesVar && len(rest) > 0 {
		d, rest = s.vars[rest[0]], rest[1:]
	}
	if d == nil {
		return nil, false
	}
	for _, name := range rest {
		switch name {
		case "@items", "@values":
			d = d.ElemType
		case "@keys":
			d = d.KeyType
		default:
			f, ok := d.Fields[name]
			if !ok {
				return nil, true
			}
			d = f.Type
		}
		if d == nil {
			return nil, true
		}
	}
	return d, true
}

// selected is the declared type of a field selection from a typed
// variable (object.spec.containers), nil for any other expression.
func (s typedSizes) selected(e celast.Expr) *apiservercel.DeclType {
	var path []string
	for e.Kind() == celast.SelectKind {
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			return nil
		}
		path = append(path, sel.FieldName())
		e = sel.Operand()
	}
	if e.Kind() != celast.IdentKind {
		return nil
	}
	path = append(path, e.AsIdent())
	slices.Reverse(path)
	d, _ := s.at(path)
	return d
}
