package policies

import (
	"fmt"
	"strings"

	celgo "github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"

	admcel "github.com/admitd/admitd/pkg/admission/cel"
	"github.com/admitd/admitd/pkg/admission/policyschema"
)

// SchemaResolver gives the OpenAPI schema of a kind (references resolved),
// or nil when it has none.
type SchemaResolver = policyschema.SchemaResolver

// TypeChecker computes a ValidatingAdmissionPolicy's
// status.typeChecking.expressionWarnings, as upstream's status controller
// does: each validation expression and messageExpression is compiled
// against the schema of every kind the policy's rules name explicitly (at
// most ten; wildcards and subresources are skipped), with params typed by
// the paramKind's schema. Kinds without a schema are skipped. It never
// changes what a policy enforces.
type TypeChecker struct {
	// Schemas resolves schemas; required.
	Schemas SchemaResolver
	// KindsFor maps a resource to its kinds (a REST mapper's KindsFor).
	KindsFor func(gvr schema.GroupVersionResource) []schema.GroupVersionKind
}

// Check returns the warnings of p, in validation order.
func (c *TypeChecker) Check(p *admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning {
	var params *apiservercel.DeclType
	hasParams := false
	if pk := p.Spec.ParamKind; pk != nil {
		if gv, err := schema.ParseGroupVersion(pk.APIVersion); err == nil {
			hasParams = true
			params = c.declType(gv.WithKind(pk.Kind))
		}
	}
	type target struct {
		gvk  schema.GroupVersionKind
		envs *typeCheckEnv
	}
	var targets []target
	for _, gvk := range c.kindsToCheck(p) {
		if object := c.declType(gvk); object != nil {
			targets = append(targets, target{gvk, newTypeCheckEnv(object, params, hasParams, p.Spec.Variables)})
		}
	}
	check := func(expr string) string {
		var out []string
		for _, t := range targets {
			if msg := t.envs.check(expr); msg != "" {
				out = append(out, fmt.Sprintf("%v: %s\n", t.gvk, msg))
			}
		}
		return strings.Join(out, "\n")
	}
	var warnings []admissionregistrationv1.ExpressionWarning
	path := field.NewPath("spec", "validations")
	for i, v := range p.Spec.Validations {
		if w := check(v.Expression); w != "" {
			warnings = append(warnings, admissionregistrationv1.ExpressionWarning{FieldRef: path.Index(i).Child("expression").String(), Warning: w})
		}
		if v.MessageExpression == "" {
			continue
		}
		if w := check(v.MessageExpression); w != "" {
			warnings = append(warnings, admissionregistrationv1.ExpressionWarning{FieldRef: path.Index(i).Child("messageExpression").String(), Warning: w})
		}
	}
	return warnings
}

// declType is the CEL type of a kind's schema, or nil.
func (c *TypeChecker) declType(gvk schema.GroupVersionKind) *apiservercel.DeclType {
	return policyschema.KindDeclType(c.Schemas, gvk)
}

// kindsToCheck lists the kinds the rules name without wildcards, sorted,
// at most maxTypesToCheck.
func (c *TypeChecker) kindsToCheck(p *admissionregistrationv1.ValidatingAdmissionPolicy) []schema.GroupVersionKind {
	return policyschema.MatchedKinds(p.Spec.MatchConstraints, c.KindsFor)
}

// typeCheckEnv is the environment of one kind: object and oldObject typed
// by its schema, the policy's variables typed as they compile.
type typeCheckEnv struct {
	env *celgo.Env
	err error
}

func newTypeCheckEnv(object, params *apiservercel.DeclType, hasParams bool, vars []admissionregistrationv1.Variable) *typeCheckEnv {
	req, ns := admcel.RequestType(), admcel.NamespaceType()
	decls := []*apiservercel.DeclType{ns, req, object}
	opts := []celgo.EnvOption{
		celgo.Variable(admcel.NamespaceVar, ns.CelType()), celgo.Variable(admcel.RequestVar, req.CelType()),
		celgo.Variable(admcel.ObjectVar, object.CelType()), celgo.Variable(admcel.OldObjectVar, object.CelType()),
		celgo.Variable(admcel.AuthorizerVar, library.AuthorizerType),
	}
	if hasParams {
		pt := celgo.DynType
		if params != nil {
			decls, pt = append(decls, params), params.CelType()
		}
		opts = append(opts, celgo.Variable(admcel.ParamsVar, pt))
	}
	varType := apiservercel.NewObjectType("kubernetes.variables", map[string]*apiservercel.DeclField{})
	decls = append(decls, varType)
	opts = append(opts, celgo.Variable(admcel.VariablesVar, varType.CelType()))
	set, err := environment.MustBaseEnvSet(admcel.DefaultCompatibilityVersion).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0), EnvOptions: opts, DeclTypes: decls})
	if err != nil {
		return &typeCheckEnv{err: err}
	}
	env, err := set.Env(environment.StoredExpressions)
	if err != nil {
		return &typeCheckEnv{err: err}
	}
	for _, v := range vars {
		var out *celgo.Type
		if ast, issues := env.Compile(v.Expression); issues == nil {
			out = ast.OutputType()
		}
		varType.Fields[v.Name] = apiservercel.NewDeclField(v.Name, admcel.DeclTypeOf(out), true, nil, nil)
	}
	return &typeCheckEnv{env: env}
}

// check returns the issues of expr in this environment, or "".
func (e *typeCheckEnv) check(expr string) string {
	if e.err != nil {
		return fmt.Sprintf("type checking error: %v", e.err)
	}
	if _, issues := e.env.Compile(expr); issues != nil {
		return issues.String()
	}
	return ""
}
