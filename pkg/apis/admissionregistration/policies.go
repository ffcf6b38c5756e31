package admissionregistration

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	celgo "github.com/google/cel-go/cel"
	v1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	admissioncel "github.com/admitd/admitd/pkg/admission/cel"
)

// API validation of ValidatingAdmissionPolicy and
// ValidatingAdmissionPolicyBinding (upstream
// pkg/apis/admissionregistration/validation). The status (typeChecking) is
// not validated here.

const (
	maxAuditAnnotations = 20
	// maxAuditAnnotationExpression is 5 KiB: less than the 10 KiB a value
	// may have, as an expression often grows the string it builds.
	maxAuditAnnotationExpression = 5 * 1024
)

// policyOptions are the rules that differ between create and update.
type policyOptions struct {
	skipMatchConditions bool
	// The old object's expressions, compiled in the StoredExpressions
	// environment. variables share the validations' set, as upstream's do.
	oldMatchConditions, oldValidations, oldMessages, oldAuditValues exprSet
}

// policyValidator validates one policy spec: its param kind decides whether
// params is declared, and variables make every expression see `variables`.
type policyValidator struct {
	o         policyOptions
	hasParams bool
	// mutating rejects operations a mutating policy cannot act on.
	mutating bool
	checker  *exprChecker
}

func newPolicyValidator(o policyOptions, paramKind *v1.ParamKind, composed bool) *policyValidator {
	return &policyValidator{o: o, hasParams: paramKind != nil, checker: newExprChecker(composed)}
}

// compile checks expr; old says whether the old object had it.
func (v *policyValidator) compile(expr, shown string, old, authorizer bool, results []*celgo.Type, fldPath *field.Path) field.ErrorList {
	opts := admissioncel.CompileOptions{HasParams: v.hasParams, HasAuthorizer: authorizer, NewExpressions: !old, ResultTypes: results}
	if err := v.checker.check(expr, opts); err != nil {
		return field.ErrorList{celFieldError(fldPath, shown, err)}
	}
	return nil
}

func validateVAPSpec(p *v1.ValidatingAdmissionPolicy, o policyOptions) field.ErrorList {
	spec, fldPath := &p.Spec, field.NewPath("spec")
	v := newPolicyValidator(o, spec.ParamKind, len(spec.Variables) > 0)
	errs := validateFailurePolicy(spec.FailurePolicy, fldPath.Child("failurePolicy"))
	errs = append(errs, v.policyCommon(spec.ParamKind, spec.MatchConstraints, spec.MatchConditions, fldPath)...)
	for i := range spec.Variables {
		errs = append(errs, v.variable(&spec.Variables[i], o.oldValidations, fldPath.Child("variables").Index(i))...)
	}
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		return append(errs, field.Required(fldPath.Child("validations"), msg), field.Required(fldPath.Child("auditAnnotations"), msg))
	}
	for i := range spec.Validations {
		errs = append(errs, v.validation(&spec.Validations[i], fldPath.Child("validations").Index(i))...)
	}
	if spec.AuditAnnotations == nil {
		return errs
	}
	aaPath := fldPath.Child("auditAnnotations")
	if len(spec.AuditAnnotations) > maxAuditAnnotations {
		errs = append(errs, field.Invalid(aaPath, internalAuditAnnotations(spec.AuditAnnotations), fmt.Sprintf("must not have more than %d auditAnnotations", maxAuditAnnotations)))
	}
	keys := map[string]bool{}
	for i := range spec.AuditAnnotations {
		a := &spec.AuditAnnotations[i]
		errs = append(errs, v.auditAnnotation(p.Name, a, aaPath.Index(i))...)
		if keys[a.Key] {
			errs = append(errs, field.Duplicate(aaPath.Index(i).Child("key"), a.Key))
		}
		keys[a.Key] = true
	}
	return errs
}

// policyCommon checks paramKind, matchConstraints and matchConditions, which
// both policy kinds have.
func (v *policyValidator) policyCommon(pk *v1.ParamKind, mc *v1.MatchResources, conds []v1.MatchCondition, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pk != nil {
		errs = append(errs, validateParamKind(pk, fldPath.Child("paramKind"))...)
	}
	if mc == nil {
		errs = append(errs, field.Required(fldPath.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, validateMatchResources(mc, fldPath.Child("matchConstraints"))...)
		// The resource rules give the expressions their types.
		if len(mc.ResourceRules) == 0 {
			errs = append(errs, field.Required(fldPath.Child("matchConstraints", "resourceRules"), ""))
		}
		if v.mutating {
			errs = append(errs, validateMutatingOperations(mc, fldPath.Child("matchConstraints", "resourceRules", "operations"))...)
		}
	}
	if !v.o.skipMatchConditions {
		mco := matchConditionsOptions{params: v.hasParams, old: v.o.oldMatchConditions}
		errs = append(errs, validateMatchConditions(conds, mco, fldPath.Child("matchConditions"))...)
	}
	return errs
}

var (
	celIdentifier = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)
	celReserved   = []string{"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
		"function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"}
)

func isCELIdentifier(name string) bool {
	return celIdentifier.MatchString(name) && !slices.Contains(celReserved, name)
}

func (v *policyValidator) variable(va *v1.Variable, old exprSet, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(va.Name) == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), "name is not specified"))
	} else if !isCELIdentifier(va.Name) {
		errs = append(errs, field.Invalid(fldPath.Child("name"), va.Name, "must be a valid CEL identifier"))
	}
	if strings.TrimSpace(va.Expression) == "" {
		return append(errs, field.Required(fldPath.Child("expression"), "expression is not specified"))
	}
	opts := admissioncel.CompileOptions{HasParams: v.hasParams, HasAuthorizer: true, NewExpressions: !old[va.Expression]}
	if err := v.checker.storeVariable(va.Name, va.Expression, opts); err != nil {
		errs = append(errs, celFieldError(fldPath.Child("expression"), va.Expression, err))
	}
	return errs
}

var lineBreaks = regexp.MustCompile(`[\n\r]+`)

func (v *policyValidator) validation(va *v1.Validation, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(va.Expression) == "" {
		errs = append(errs, field.Required(fldPath.Child("expression"), "expression is not specified"))
	} else {
		errs = append(errs, v.compile(va.Expression, va.Expression, v.o.oldValidations[va.Expression], true, boolResult, fldPath.Child("expression"))...)
	}
	msgExpr := strings.TrimSpace(va.MessageExpression)
	switch {
	case va.MessageExpression != "" && msgExpr == "":
		errs = append(errs, field.Invalid(fldPath.Child("messageExpression"), va.MessageExpression, "must be non-empty if specified"))
	case msgExpr != "":
		// Compiled untrimmed so that error columns match what the user wrote.
		errs = append(errs, v.compile(va.MessageExpression, va.MessageExpression, v.o.oldMessages[va.MessageExpression], false, stringResult, fldPath.Child("messageExpression"))...)
	}
	msg := strings.TrimSpace(va.Message)
	switch {
	case va.Message != "" && msg == "":
		errs = append(errs, field.Invalid(fldPath.Child("message"), va.Message, "must be non-empty if specified"))
	case lineBreaks.MatchString(msg):
		errs = append(errs, field.Invalid(fldPath.Child("message"), va.Message, "must not contain line breaks"))
	}
	if va.Reason != nil && !supported(validationReasonValues, *va.Reason) {
		errs = append(errs, field.NotSupported(fldPath.Child("reason"), *va.Reason, validationReasonValues))
	}
	return errs
}

func (v *policyValidator) auditAnnotation(policyName string, a *v1.AuditAnnotation, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if policyName != "" {
		errs = append(errs, validateQualifiedName(policyName+"/"+a.Key, fldPath.Child("key"))...)
	} else {
		errs = append(errs, field.Invalid(fldPath.Child("key"), a.Key, "requires metadata.name be non-empty"))
	}
	valuePath := fldPath.Child("valueExpression")
	switch expr := strings.TrimSpace(a.ValueExpression); {
	case expr == "":
		errs = append(errs, field.Required(valuePath, "valueExpression is not specified"))
	case len(expr) > maxAuditAnnotationExpression:
		// Upstream reports the length as Required, not TooLong.
		errs = append(errs, field.Required(valuePath, fmt.Sprintf("must not exceed %d bytes in length", maxAuditAnnotationExpression)))
	default:
		errs = append(errs, v.compile(expr, a.ValueExpression, v.o.oldAuditValues[a.ValueExpression], true, stringOrNullResult, valuePath)...)
	}
	return errs
}

// internalAuditAnnotation prints as upstream's internal type does in an
// Invalid error: JSON without field tags.
type internalAuditAnnotation struct{ Key, ValueExpression string }

func internalAuditAnnotations(as []v1.AuditAnnotation) []internalAuditAnnotation {
	out := make([]internalAuditAnnotation, len(as))
	for i, a := range as {
		out[i] = internalAuditAnnotation{a.Key, a.ValueExpression}
	}
	return out
}

func vapUpdateOptions(p, old *v1.ValidatingAdmissionPolicy) policyOptions {
	o := policyOptions{
		skipMatchConditions: reflect.DeepEqual(p.Spec.ParamKind, old.Spec.ParamKind) && reflect.DeepEqual(p.Spec.MatchConditions, old.Spec.MatchConditions),
		oldMatchConditions:  exprSet{}, oldValidations: exprSet{}, oldMessages: exprSet{}, oldAuditValues: exprSet{},
	}
	for _, mc := range old.Spec.MatchConditions {
		o.oldMatchConditions[mc.Expression] = true
	}
	for _, va := range old.Spec.Validations {
		o.oldValidations[va.Expression] = true
		if va.MessageExpression != "" {
			o.oldMessages[va.MessageExpression] = true
		}
	}
	for _, a := range old.Spec.AuditAnnotations {
		o.oldAuditValues[a.ValueExpression] = true
	}
	return o
}

func validateVAPBindingSpec(spec *v1.ValidatingAdmissionPolicyBindingSpec) field.ErrorList {
	fldPath := field.NewPath("spec")
	errs := validatePolicyName(spec.PolicyName, fldPath.Child("policyName"))
	errs = append(errs, validateParamRef(spec.ParamRef, fldPath.Child("paramRef"))...)
	errs = append(errs, validateMatchResources(spec.MatchResources, fldPath.Child("matchResources"))...)
	return append(errs, validateValidationActions(spec.ValidationActions, fldPath.Child("validationActions"))...)
}

// Per-kind entry points of Validate and ValidateUpdate.

func validateValidatingAdmissionPolicy(obj runtime.Object) field.ErrorList {
	p := obj.(*v1.ValidatingAdmissionPolicy)
	return append(validateReservedName(p.Name), validateVAPSpec(p, policyOptions{})...)
}

func validateValidatingAdmissionPolicyUpdate(obj, old runtime.Object) field.ErrorList {
	p := obj.(*v1.ValidatingAdmissionPolicy)
	return validateVAPSpec(p, vapUpdateOptions(p, old.(*v1.ValidatingAdmissionPolicy)))
}

func validateValidatingAdmissionPolicyBinding(obj runtime.Object) field.ErrorList {
	b := obj.(*v1.ValidatingAdmissionPolicyBinding)
	return append(validateReservedName(b.Name), validateVAPBindingSpec(&b.Spec)...)
}

func validateValidatingAdmissionPolicyBindingUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateVAPBindingSpec(&obj.(*v1.ValidatingAdmissionPolicyBinding).Spec)
}
