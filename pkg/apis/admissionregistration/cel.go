package admissionregistration

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/traits"
	v1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservercel "k8s.io/apiserver/pkg/cel"

	admissioncel "github.com/admitd/admitd/pkg/admission/cel"
)

// Write-time compilation of admission CEL expressions, as upstream's
// validation does it: new or changed expressions against the environment of
// the compatibility version (NewExpressions), expressions the old object
// already had against every library the server knows (StoredExpressions).
// Compilation itself is pkg/admission/cel's, so what validates here is what
// admitd evaluates later.

// admissionCompiler is the compiler validation uses; built on first use, as
// building the base environment is not cheap.
var admissionCompiler = sync.OnceValue(func() *admissioncel.Compiler {
	return admissioncel.NewCompiler(admissioncel.Options{})
})

var (
	boolResult         = []*celgo.Type{celgo.BoolType}
	stringResult       = []*celgo.Type{celgo.StringType}
	stringOrNullResult = []*celgo.Type{celgo.StringType, celgo.NullType}
	// The ApplyConfiguration and JSONPatch result types of MutatingAdmissionPolicy.
	objectResult    = []*celgo.Type{celgo.ObjectType("Object")}
	jsonPatchResult = []*celgo.Type{celgo.ListType(celgo.ObjectType("JSONPatch"))}
)

// exprChecker compiles the expressions of one object under validation. With
// variables it composes them as upstream's composited compiler does: every
// expression sees `variables`, typed by what the variables compiled to.
type exprChecker struct {
	compiler *admissioncel.Compiler
	vars     *apiservercel.DeclType // nil: no composition
	envs     map[envKey]*celgo.Env
}

type envKey struct{ params, authorizer, patchTypes, newExpressions bool }

// newExprChecker returns a checker; composed declares `variables`.
func newExprChecker(composed bool) *exprChecker {
	c := &exprChecker{compiler: admissionCompiler()}
	if composed {
		c.vars = apiservercel.NewObjectType("kubernetes.variables", map[string]*apiservercel.DeclField{})
		c.envs = map[envKey]*celgo.Env{}
	}
	return c
}

// check compiles expr and returns upstream's error for it, or nil.
func (c *exprChecker) check(expr string, o admissioncel.CompileOptions) *apiservercel.Error {
	if c.vars == nil {
		return asCELError(c.compiler.Compile(expr, o).Err())
	}
	_, err := c.compileComposed(expr, o)
	return err
}

// storeVariable compiles a variable and declares it, with the type it
// compiled to (dyn when it did not compile), for the expressions after it.
func (c *exprChecker) storeVariable(name, expr string, o admissioncel.CompileOptions) *apiservercel.Error {
	if c.vars == nil {
		return &apiservercel.Error{Type: apiservercel.ErrorTypeInternal, Detail: "variable composition is not allowed"}
	}
	out, err := c.compileComposed(expr, o)
	c.vars.Fields[name] = apiservercel.NewDeclField(name, declTypeOf(out), true, nil, nil)
	return err
}

func (c *exprChecker) compileComposed(expr string, o admissioncel.CompileOptions) (*celgo.Type, *apiservercel.Error) {
	env, err := c.env(o)
	if err != nil {
		return nil, &apiservercel.Error{Type: apiservercel.ErrorTypeInternal, Detail: fmt.Sprintf("unexpected error loading CEL environment: %v", err)}
	}
	return compileIn(env, expr, o.ResultTypes)
}

// env extends the admission environment of o with `variables`. The type
// provider reads the variables' fields when an expression is checked, so
// variables stored later are visible to later expressions.
func (c *exprChecker) env(o admissioncel.CompileOptions) (*celgo.Env, error) {
	key := envKey{o.HasParams, o.HasAuthorizer, o.HasPatchTypes, o.NewExpressions}
	if env, ok := c.envs[key]; ok {
		return env, nil
	}
	base, err := c.compiler.Env(o)
	if err != nil {
		return nil, err
	}
	provider := apiservercel.NewDeclTypeProvider(c.vars)
	provider.SetRecognizeKeywordAsFieldName(true)
	opts, err := provider.EnvOptions(base.CELTypeProvider())
	if err != nil {
		return nil, err
	}
	env, err := base.Extend(append(opts, celgo.Variable("variables", c.vars.CelType()))...)
	if err != nil {
		return nil, err
	}
	c.envs[key] = env
	return env, nil
}

// compileIn does what pkg/admission/cel's Compile does, in env: compile,
// check the result type exactly, plan the program.
func compileIn(env *celgo.Env, expr string, results []*celgo.Type) (*celgo.Type, *apiservercel.Error) {
	fail := func(t apiservercel.ErrorType, detail string, cause error) *apiservercel.Error {
		return &apiservercel.Error{Type: t, Detail: detail, Cause: cause}
	}
	ast, issues := env.Compile(expr)
	if issues != nil {
		return nil, fail(apiservercel.ErrorTypeInvalid, "compilation failed: "+issues.String(), apiservercel.NewCompilationError(issues))
	}
	out := ast.OutputType()
	if !resultAllowed(out, results) {
		if len(results) == 1 {
			return nil, fail(apiservercel.ErrorTypeInvalid, fmt.Sprintf("must evaluate to %v but got %v", results[0].String(), out.String()), nil)
		}
		return nil, fail(apiservercel.ErrorTypeInvalid, fmt.Sprintf("must evaluate to one of %v but got %v", results, out.String()), nil)
	}
	if _, err := celgo.AstToCheckedExpr(ast); err != nil {
		return nil, fail(apiservercel.ErrorTypeInternal, "unexpected compilation error: "+err.Error(), nil)
	}
	if _, err := env.Program(ast, celgo.InterruptCheckFrequency(100)); err != nil {
		return nil, fail(apiservercel.ErrorTypeInternal, "program instantiation failed: "+err.Error(), nil)
	}
	return out, nil
}

func resultAllowed(out *celgo.Type, results []*celgo.Type) bool {
	if len(results) == 0 {
		return true
	}
	for _, t := range results {
		if out.IsExactType(t) || celgo.AnyType.IsExactType(t) {
			return true
		}
	}
	return false
}

// declTypeOf is the declared type a variable gets from its compiled type:
// scalars as themselves, lists and maps element-wise, anything else dyn.
func declTypeOf(t *celgo.Type) *apiservercel.DeclType {
	if t == nil {
		return apiservercel.DynType
	}
	switch t {
	case celgo.AnyType:
		return apiservercel.AnyType
	case celgo.BoolType:
		return apiservercel.BoolType
	case celgo.BytesType:
		return apiservercel.BytesType
	case celgo.DoubleType:
		return apiservercel.DoubleType
	case celgo.DurationType:
		return apiservercel.DurationType
	case celgo.IntType:
		return apiservercel.IntType
	case celgo.NullType:
		return apiservercel.NullType
	case celgo.StringType:
		return apiservercel.StringType
	case celgo.TimestampType:
		return apiservercel.TimestampType
	case celgo.UintType:
		return apiservercel.UintType
	}
	if t.HasTrait(traits.ContainerType) && t.HasTrait(traits.IndexerType) {
		switch p := t.Parameters(); len(p) {
		case 1:
			return apiservercel.NewListType(declTypeOf(p[0]), -1)
		case 2:
			return apiservercel.NewMapType(declTypeOf(p[0]), declTypeOf(p[1]), -1)
		}
	}
	return apiservercel.DynType
}

func asCELError(err error) *apiservercel.Error {
	if err == nil {
		return nil
	}
	var celErr *apiservercel.Error
	if errors.As(err, &celErr) {
		return celErr
	}
	return &apiservercel.Error{Type: apiservercel.ErrorTypeInternal, Detail: err.Error()}
}

// celFieldError turns a compile error into the field error upstream
// reports; shown is the expression as upstream quotes it.
func celFieldError(fldPath *field.Path, shown string, err *apiservercel.Error) *field.Error {
	switch err.Type {
	case apiservercel.ErrorTypeRequired:
		return field.Required(fldPath, err.Detail)
	case apiservercel.ErrorTypeInvalid:
		return field.Invalid(fldPath, shown, err.Detail)
	case apiservercel.ErrorTypeInternal:
		return field.InternalError(fldPath, err)
	}
	return field.InternalError(fldPath, fmt.Errorf("unsupported error type: %w", err))
}

// exprSet is a set of expressions an old object already had.
type exprSet map[string]bool

// matchConditionsOptions say how matchConditions are validated.
type matchConditionsOptions struct {
	params bool
	// old holds the expressions of the old object (StoredExpressions).
	old exprSet
}

const maxMatchConditions = 64

// validateMatchConditions checks the matchConditions of a webhook or
// policy; they never see variables.
func validateMatchConditions(conds []v1.MatchCondition, o matchConditionsOptions, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conds) > maxMatchConditions {
		errs = append(errs, field.TooMany(fldPath, len(conds), maxMatchConditions))
	}
	checker := newExprChecker(false)
	seen := map[string]bool{}
	for i, mc := range conds {
		p := fldPath.Index(i)
		if expr := strings.TrimSpace(mc.Expression); expr == "" {
			errs = append(errs, field.Required(p.Child("expression"), ""))
		} else {
			opts := admissioncel.CompileOptions{HasParams: o.params, HasAuthorizer: true, NewExpressions: !o.old[expr], ResultTypes: boolResult}
			if err := checker.check(expr, opts); err != nil {
				errs = append(errs, celFieldError(p.Child("expression"), expr, err))
			}
		}
		if mc.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			errs = append(errs, validateQualifiedName(mc.Name, p.Child("name"))...)
		}
		if mc.Name != "" {
			if seen[mc.Name] {
				errs = append(errs, field.Duplicate(p.Child("name"), mc.Name))
			}
			seen[mc.Name] = true
		}
	}
	return errs
}
