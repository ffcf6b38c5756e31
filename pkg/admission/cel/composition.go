package cel

import (
	"context"
	"math"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/lazy"
)

// variablesTypeName is the CEL type of the variables variable.
const variablesTypeName = "kubernetes.variables"

// Variable is one entry of a policy's spec.variables.
type Variable struct {
	Name       string
	Expression string
}

// Composition compiles the expressions of one admission policy, which may
// read the policy's variables through `variables`, as upstream's composited
// compiler does: variables are compiled in order, each seeing only the
// earlier ones (a later reference is a compile error of the referring
// variable, reported when it is used), and declared with their result type
// (dyn when they do not compile). At evaluation a variable is computed on
// first use, once per activation, and its cost is charged to the expression
// that first used it.
//
// A Composition is immutable once built and safe for concurrent use.
type Composition struct {
	compiler *Compiler
	varType  *apiservercel.DeclType
	names    []string
	vars     []*Program
	// none is the variables value of a composition without variables:
	// empty, hence never written and shareable.
	none *lazy.MapValue

	mu    sync.Mutex
	envs  map[compositionEnvKey]*cel.Env
	cache map[cacheKey]*Program
}

type compositionEnvKey struct {
	decls   declarations
	newExpr bool
}

// Compose compiles vars with the declarations of o (policies: HasAuthorizer,
// and HasParams when they have a paramKind) and returns the composition to
// compile the policy's other expressions in.
func (c *Compiler) Compose(vars []Variable, o CompileOptions) *Composition {
	k := &Composition{
		compiler: c,
		varType:  apiservercel.NewObjectType(variablesTypeName, map[string]*apiservercel.DeclField{}),
		envs:     map[compositionEnvKey]*cel.Env{},
		cache:    map[cacheKey]*Program{},
	}
	o.ResultTypes = nil
	for _, v := range vars {
		p := k.Compile(v.Expression, o)
		// Fields are only added while composing; the type provider reads
		// them when later expressions are checked.
		k.varType.Fields[v.Name] = apiservercel.NewDeclField(v.Name, DeclTypeOf(p.OutputType()), true, nil, nil)
		k.names = append(k.names, v.Name)
		k.vars = append(k.vars, p)
	}
	if len(vars) == 0 {
		k.none = lazy.NewMapValue(k.varType.CelType())
	}
	return k
}

// Compile compiles expression in the composition's environment for o.
// Errors are kept in the Program.
func (k *Composition) Compile(expression string, o CompileOptions) *Program {
	key := cacheKey{expression: expression, decls: declsOf(o), newExpr: o.NewExpressions, results: typesKey(o.ResultTypes)}
	k.mu.Lock()
	defer k.mu.Unlock()
	if p, ok := k.cache[key]; ok {
		return p
	}
	env, err := k.envLocked(o)
	var p *Program
	if err != nil {
		p = failed(expression, apiservercel.ErrorTypeInternal, "unexpected error loading CEL environment: "+err.Error(), nil)
	} else {
		p = compileIn(env, expression, o.ResultTypes)
	}
	k.cache[key] = p
	return p
}

// envLocked extends the admission environment of o with the variables.
func (k *Composition) envLocked(o CompileOptions) (*cel.Env, error) {
	key := compositionEnvKey{decls: declsOf(o), newExpr: o.NewExpressions}
	if env, ok := k.envs[key]; ok {
		return env, nil
	}
	base, err := k.compiler.Env(o)
	if err != nil {
		return nil, err
	}
	env, err := withVariables(base, k.varType)
	if err != nil {
		return nil, err
	}
	k.envs[key] = env
	return env, nil
}

// withVariables extends base with `variables` of type varType, whose
// fields may be added later (the type provider reads them when an
// expression is checked).
func withVariables(base *cel.Env, varType *apiservercel.DeclType) (*cel.Env, error) {
	provider := apiservercel.NewDeclTypeProvider(varType)
	provider.SetRecognizeKeywordAsFieldName(true)
	opts, err := provider.EnvOptions(base.CELTypeProvider())
	if err != nil {
		return nil, err
	}
	return base.Extend(append(opts, cel.Variable(VariablesVar, varType.CelType()))...)
}

// Len is the number of variables.
func (k *Composition) Len() int { return len(k.names) }

// NewActivation binds the variables of in and a fresh, lazy variables map
// whose evaluations use ctx.
func (k *Composition) NewActivation(ctx context.Context, in Input) (*Activation, error) {
	act, err := NewActivation(in)
	if err != nil {
		return nil, err
	}
	k.bind(ctx, act)
	return act, nil
}

func (k *Composition) bind(ctx context.Context, act *Activation) {
	if k.none != nil {
		act.variables = k.none
		return
	}
	m := lazy.NewMapValue(k.varType.CelType())
	for i, name := range k.names {
		v := &lazyVariable{ctx: ctx, act: act, name: name, prog: k.vars[i]}
		m.Append(name, v.eval)
	}
	act.variables = m
}

// lazyVariable evaluates one variable for one activation.
type lazyVariable struct {
	ctx  context.Context
	act  *Activation
	name string
	prog *Program
}

func (v *lazyVariable) eval(*lazy.MapValue) ref.Val {
	if v.prog.err != nil {
		return types.NewErr("composited variable %q fails to compile: %v", v.name, v.prog.err)
	}
	val, details, err := v.prog.program.ContextEval(v.ctx, v.act)
	if details == nil {
		return types.NewErr("unable to get evaluation details of variable %q", v.name)
	}
	cost := details.ActualCost()
	if cost == nil {
		return types.NewErr("unable to calculate cost of variable %q", v.name)
	}
	if *cost > math.MaxInt64 {
		v.act.varCost = math.MaxInt64
	} else {
		v.act.varCost += int64(*cost)
	}
	if err != nil {
		return types.NewErr("composited variable %q fails to evaluate: %v", v.name, err)
	}
	return val
}

// DeclTypeOf is the declared type of a variable with result type t: the
// primitive, list and map types keep their shape, anything else is dyn.
func DeclTypeOf(t *cel.Type) *apiservercel.DeclType {
	if t == nil {
		return apiservercel.DynType
	}
	for _, p := range primitives {
		if t.IsExactType(p.cel) {
			return p.decl
		}
	}
	if t.Kind() == types.ListKind && len(t.Parameters()) == 1 {
		return apiservercel.NewListType(DeclTypeOf(t.Parameters()[0]), -1)
	}
	if t.Kind() == types.MapKind && len(t.Parameters()) == 2 {
		return apiservercel.NewMapType(DeclTypeOf(t.Parameters()[0]), DeclTypeOf(t.Parameters()[1]), -1)
	}
	return apiservercel.DynType
}

var primitives = []struct {
	cel  *cel.Type
	decl *apiservercel.DeclType
}{
	{cel.AnyType, apiservercel.AnyType}, {cel.BoolType, apiservercel.BoolType}, {cel.BytesType, apiservercel.BytesType},
	{cel.DoubleType, apiservercel.DoubleType}, {cel.DurationType, apiservercel.DurationType}, {cel.IntType, apiservercel.IntType},
	{cel.NullType, apiservercel.NullType}, {cel.StringType, apiservercel.StringType},
	{cel.TimestampType, apiservercel.TimestampType}, {cel.UintType, apiservercel.UintType},
}

// String lists the variable names, for logs.
func (k *Composition) String() string { return strings.Join(k.names, ",") }
