package admissionregistration

import (
	"reflect"
	"strings"

	celgo "github.com/google/cel-go/cel"
	v1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	admissioncel "github.com/admitd/admitd/pkg/admission/cel"
)

// API validation of MutatingAdmissionPolicy and
// MutatingAdmissionPolicyBinding: upstream's ValidateMutatingAdmissionPolicy
// and ValidateMutatingAdmissionPolicyBinding, with their Update variants
// (k8s.io/kubernetes/pkg/apis/admissionregistration/validation/validation.go).

// mapOptions are the rules that differ between create and update.
type mapOptions struct {
	skipMatchConditions bool
	// oldMatchConditions and oldExpressions (variables and mutations) are
	// compiled in the StoredExpressions environment.
	oldMatchConditions, oldExpressions exprSet
}

func validateMAPSpec(p *v1.MutatingAdmissionPolicy, o mapOptions) field.ErrorList {
	spec, fldPath := &p.Spec, field.NewPath("spec")
	// Mutating policies always compose variables, as their runtime compiler
	// does.
	v := newPolicyValidator(policyOptions{skipMatchConditions: o.skipMatchConditions, oldMatchConditions: o.oldMatchConditions}, spec.ParamKind, true)
	v.mutating = true
	errs := validateFailurePolicy(spec.FailurePolicy, fldPath.Child("failurePolicy"))
	errs = append(errs, v.policyCommon(spec.ParamKind, spec.MatchConstraints, spec.MatchConditions, fldPath)...)
	for i := range spec.Variables {
		errs = append(errs, v.variable(&spec.Variables[i], o.oldExpressions, fldPath.Child("variables").Index(i))...)
	}
	if len(spec.Mutations) == 0 {
		errs = append(errs, field.Required(fldPath.Child("mutations"), "mutations must contain at least one item"))
	}
	for i := range spec.Mutations {
		errs = append(errs, v.mutation(&spec.Mutations[i], o.oldExpressions, fldPath.Child("mutations").Index(i))...)
	}
	switch {
	case spec.ReinvocationPolicy == "":
		errs = append(errs, field.Required(fldPath.Child("reinvocationPolicy"), ""))
	case !supported(mapReinvocationValues, spec.ReinvocationPolicy):
		errs = append(errs, field.NotSupported(fldPath.Child("reinvocationPolicy"), spec.ReinvocationPolicy, mapReinvocationValues))
	}
	return errs
}

// mutation checks that the payload matches patchType and compiles it.
func (v *policyValidator) mutation(m *v1.Mutation, old exprSet, fldPath *field.Path) field.ErrorList {
	applyPath, patchPath := fldPath.Child("applyConfiguration"), fldPath.Child("jsonPatch")
	var errs field.ErrorList
	switch m.PatchType {
	case "":
		return field.ErrorList{field.Required(fldPath.Child("patchType"), "")}
	case v1.PatchTypeJSONPatch:
		if m.JSONPatch == nil {
			errs = append(errs, field.Required(patchPath, "must be specified when patchType is JSONPatch"))
		} else {
			errs = append(errs, v.patchExpression(m.JSONPatch.Expression, old, jsonPatchResult, patchPath.Child("expression"))...)
		}
		if m.ApplyConfiguration != nil {
			errs = append(errs, field.Invalid(applyPath, "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
		}
	case v1.PatchTypeApplyConfiguration:
		if m.ApplyConfiguration == nil {
			errs = append(errs, field.Required(applyPath, "must be specified when patchType is ApplyConfiguration"))
		} else {
			errs = append(errs, v.patchExpression(m.ApplyConfiguration.Expression, old, objectResult, applyPath.Child("expression"))...)
		}
		if m.JSONPatch != nil {
			errs = append(errs, field.Invalid(patchPath, "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
		}
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("patchType"), m.PatchType, patchTypeValues))
	}
	return errs
}

func (v *policyValidator) patchExpression(expr string, old exprSet, results []*celgo.Type, fldPath *field.Path) field.ErrorList {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	opts := admissioncel.CompileOptions{HasParams: v.hasParams, HasAuthorizer: true, HasPatchTypes: true,
		NewExpressions: !old[expr], ResultTypes: results}
	if err := v.checker.check(expr, opts); err != nil {
		return field.ErrorList{celFieldError(fldPath, expr, err)}
	}
	return nil
}

// mapUpdateOptions mirrors the ValidatingAdmissionPolicy update rules.
func mapUpdateOptions(p, old *v1.MutatingAdmissionPolicy) mapOptions {
	o := mapOptions{
		skipMatchConditions: reflect.DeepEqual(p.Spec.ParamKind, old.Spec.ParamKind) && reflect.DeepEqual(p.Spec.MatchConditions, old.Spec.MatchConditions),
		oldMatchConditions:  exprSet{},
		oldExpressions:      exprSet{},
	}
	for _, mc := range old.Spec.MatchConditions {
		o.oldMatchConditions[mc.Expression] = true
	}
	for _, va := range old.Spec.Variables {
		o.oldExpressions[va.Expression] = true
	}
	for _, m := range old.Spec.Mutations {
		if m.ApplyConfiguration != nil {
			o.oldExpressions[strings.TrimSpace(m.ApplyConfiguration.Expression)] = true
		}
		if m.JSONPatch != nil {
			o.oldExpressions[strings.TrimSpace(m.JSONPatch.Expression)] = true
		}
	}
	return o
}

func validateMAPBindingSpec(spec *v1.MutatingAdmissionPolicyBindingSpec) field.ErrorList {
	fldPath := field.NewPath("spec")
	errs := validatePolicyName(spec.PolicyName, fldPath.Child("policyName"))
	errs = append(errs, validateParamRef(spec.ParamRef, fldPath.Child("paramRef"))...)
	errs = append(errs, validateMatchResources(spec.MatchResources, fldPath.Child("matchResources"))...)
	if spec.MatchResources != nil {
		errs = append(errs, validateMutatingOperations(spec.MatchResources, fldPath.Child("matchResources", "resourceRules", "operations"))...)
	}
	return errs
}

// Per-kind entry points of Validate and ValidateUpdate.

func validateMutatingAdmissionPolicy(obj runtime.Object) field.ErrorList {
	p := obj.(*v1.MutatingAdmissionPolicy)
	return append(validateReservedName(p.Name), validateMAPSpec(p, mapOptions{})...)
}

func validateMutatingAdmissionPolicyUpdate(obj, old runtime.Object) field.ErrorList {
	p := obj.(*v1.MutatingAdmissionPolicy)
	return validateMAPSpec(p, mapUpdateOptions(p, old.(*v1.MutatingAdmissionPolicy)))
}

func validateMutatingAdmissionPolicyBinding(obj runtime.Object) field.ErrorList {
	b := obj.(*v1.MutatingAdmissionPolicyBinding)
	return append(validateReservedName(b.Name), validateMAPBindingSpec(&b.Spec)...)
}

func validateMutatingAdmissionPolicyBindingUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateMAPBindingSpec(&obj.(*v1.MutatingAdmissionPolicyBinding).Spec)
}
