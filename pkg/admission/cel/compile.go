package cel

import (
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/utils/lru"
)

// Options configure a Compiler.
type Options struct {
	// CompatibilityVersion is the version the NewExpressions environment
	// admits libraries for. Default DefaultCompatibilityVersion (1.36).
	CompatibilityVersion *version.Version
	// CacheSize bounds how many compiled expressions the compiler keeps.
	// Default 4096.
	CacheSize int
}

// CompileOptions say how one expression is compiled. The zero value
// compiles for runtime evaluation (StoredExpressions) with object,
// oldObject, request and namespaceObject declared and any result type.
type CompileOptions struct {
	// HasParams declares params (dyn).
	HasParams bool
	// HasAuthorizer declares authorizer and authorizer.requestResource.
	HasAuthorizer bool
	// HasPatchTypes declares MutatingAdmissionPolicy's Object, JSONPatch
	// types and jsonpatch.escapeKey.
	HasPatchTypes bool
	// NewExpressions compiles against the environment of the compatibility
	// version, as write-time validation of new expressions does; by
	// default the StoredExpressions environment (every library not
	// removed) is used, as upstream does for every runtime compilation.
	NewExpressions bool
	// ResultTypes are the types the expression must have exactly (no
	// implicit dyn); empty admits any type.
	ResultTypes []*cel.Type
}

// Compiler compiles admission expressions and keeps the results: the same
// expression compiled with the same options is compiled once. It is safe for
// concurrent use.
type Compiler struct {
	base *environment.EnvSet

	mu    sync.Mutex
	envs  map[declarations]*environment.EnvSet
	cache *lru.Cache
}

// NewCompiler returns a compiler over the Kubernetes base environment.
func NewCompiler(o Options) *Compiler {
	ver := o.CompatibilityVersion
	if ver == nil {
		ver = DefaultCompatibilityVersion
	}
	size := o.CacheSize
	if size <= 0 {
		size = 4096
	}
	return &Compiler{base: environment.MustBaseEnvSet(ver), envs: map[declarations]*environment.EnvSet{}, cache: lru.New(size)}
}

// Program is a compiled expression, or the error that compiling it gave.
// Programs are immutable and safe for concurrent use.
type Program struct {
	expression string
	program    cel.Program
	outputType *cel.Type
	err        *apiservercel.Error
}

// Expression is the source text.
func (p *Program) Expression() string { return p.expression }

// OutputType is the checked type of the expression (nil on error).
func (p *Program) OutputType() *cel.Type { return p.outputType }

// Err is the compilation error, e.g. "compilation failed: ERROR: <input>:…"
// (an *apiservercel.Error), or nil.
func (p *Program) Err() error {
	if p.err == nil {
		return nil
	}
	return p.err
}

type cacheKey struct {
	expression string
	decls      declarations
	newExpr    bool
	results    string
}

type cacheEntry struct {
	once sync.Once
	prog *Program
}

// Compile compiles expression, or returns the program compiled earlier for
// the same expression and options. Errors are kept in the Program.
func (c *Compiler) Compile(expression string, o CompileOptions) *Program {
	key := cacheKey{expression: expression, decls: declsOf(o), newExpr: o.NewExpressions, results: typesKey(o.ResultTypes)}
	c.mu.Lock()
	v, ok := c.cache.Get(key)
	if !ok {
		v = &cacheEntry{}
		c.cache.Add(key, v)
	}
	c.mu.Unlock()
	e := v.(*cacheEntry)
	e.once.Do(func() { e.prog = c.compile(expression, o) })
	return e.prog
}

// Env returns the environment expressions compiled with o are checked in.
func (c *Compiler) Env(o CompileOptions) (*cel.Env, error) {
	set, err := c.envSet(declsOf(o))
	if err != nil {
		return nil, err
	}
	if o.NewExpressions {
		return set.Env(environment.NewExpressions)
	}
	return set.Env(environment.StoredExpressions)
}

func declsOf(o CompileOptions) declarations {
	return declarations{params: o.HasParams, authorizer: o.HasAuthorizer, patchTypes: o.HasPatchTypes}
}

func typesKey(ts []*cel.Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, "\x00")
}

func (c *Compiler) envSet(d declarations) (*environment.EnvSet, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if set, ok := c.envs[d]; ok {
		return set, nil
	}
	set, err := buildEnv(c.base, d, Types{})
	if err != nil {
		return nil, err
	}
	c.envs[d] = set
	return set, nil
}

// compile does what upstream's CompileCELExpression does, with its messages.
func (c *Compiler) compile(expression string, o CompileOptions) *Program {
	env, err := c.Env(o)
	if err != nil {
		return failed(expression, apiservercel.ErrorTypeInternal, fmt.Sprintf("unexpected error loading CEL environment: %v", err), nil)
	}
	return compileIn(env, expression, o.ResultTypes)
}

func failed(expression string, t apiservercel.ErrorType, detail string, cause error) *Program {
	return &Program{expression: expression, err: &apiservercel.Error{Type: t, Detail: detail, Cause: cause}}
}

// compileIn compiles expression in env and checks its result type.
func compileIn(env *cel.Env, expression string, results []*cel.Type) *Program {
	ast, issues := env.Compile(expression)
	if issues != nil {
		return failed(expression, apiservercel.ErrorTypeInvalid, "compilation failed: "+issues.String(), apiservercel.NewCompilationError(issues))
	}
	if !resultTypeAllowed(ast.OutputType(), results) {
		var reason string
		if len(results) == 1 {
			reason = fmt.Sprintf("must evaluate to %v but got %v", results[0].String(), ast.OutputType().String())
		} else {
			reason = fmt.Sprintf("must evaluate to one of %v but got %v", results, ast.OutputType().String())
		}
		return failed(expression, apiservercel.ErrorTypeInvalid, reason, nil)
	}
	if _, err := cel.AstToCheckedExpr(ast); err != nil {
		return failed(expression, apiservercel.ErrorTypeInternal, "unexpected compilation error: "+err.Error(), nil)
	}
	prog, err := env.Program(ast, cel.InterruptCheckFrequency(checkFrequency))
	if err != nil {
		return failed(expression, apiservercel.ErrorTypeInternal, "program instantiation failed: "+err.Error(), nil)
	}
	return &Program{expression: expression, program: prog, outputType: ast.OutputType()}
}

func resultTypeAllowed(out *cel.Type, allowed []*cel.Type) bool {
	if len(allowed) == 0 {
		return true
	}
	for _, t := range allowed {
		if out.IsExactType(t) || cel.AnyType.IsExactType(t) {
			return true
		}
	}
	return false
}
