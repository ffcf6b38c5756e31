package registry

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// celExpression compiles a device selector's (or a derived attribute's)
// CEL expression as kube-apiserver does, with the DRA library of the
// field (k8s.io/dynamic-resource-allocation/cel) in the environment of
// new expressions: at most 10 KiB, compiling, and within the cost limit;
// a derived attribute's cost also counts towards its claim's total. An
// expression stored before is not compiled again.
func celExpression(expr string, p *field.Path, stored, derived bool, total *uint64) field.ErrorList {
	if stored {
		return nil
	}
	if len(expr) > resourcev1.CELSelectorExpressionMaxLength {
		return field.ErrorList{field.TooLong(p, "", resourcev1.CELSelectorExpressionMaxLength)}
	}
	env := environment.NewExpressions
	compiler := dracel.GetCompiler(dracel.Features{
		EnableConsumableCapacity: draGates.Enabled(gateConsumableCapacity),
		EnableListTypeAttributes: draGates.Enabled(gateListTypeAttributes),
	})
	result := compiler.CompileCELExpression(expr, dracel.Options{EnvType: &env, DerivedAttribute: derived})
	if result.Error != nil {
		return field.ErrorList{celError(p, expr, result.Error)}
	}
	limit := uint64(resourcev1.CELSelectorExpressionMaxCost)
	if derived {
		limit = min(limit, resourcev1.DeviceClaimDerivedAttributeCELMaxCost)
		if total != nil {
			*total += result.MaxCost
		}
	}
	if result.MaxCost > limit {
		return field.ErrorList{field.Forbidden(p, "too complex, exceeds cost limit")}
	}
	return nil
}

func celError(p *field.Path, expr string, err error) *field.Error {
	var e *apiservercel.Error
	if errors.As(err, &e) {
		switch e.Type {
		case apiservercel.ErrorTypeRequired:
			return field.Required(p, e.Detail)
		case apiservercel.ErrorTypeInvalid:
			return field.Invalid(p, expr, e.Detail)
		case apiservercel.ErrorTypeInternal:
			return field.InternalError(p, e)
		}
	}
	return field.InternalError(p, fmt.Errorf("unsupported error type: %w", err))
}

func deepEqual(a, b any) bool { return apiequality.Semantic.DeepEqual(a, b) }

func corev1ResourceName(s string) corev1.ResourceName { return corev1.ResourceName(s) }

var templateMetaFields = map[string]bool{"Annotations": true, "Labels": true}

// validateTemplateMeta: a template's metadata has valid labels and
// annotations and nothing else.
func validateTemplateMeta(m *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	errs := apivalidation.ValidateAnnotations(m.Annotations, p.Child("annotations"))
	errs = append(errs, metav1validation.ValidateLabels(m.Labels, p.Child("labels"))...)
	return append(errs, validateFieldAllowList(*m, templateMetaFields, "cannot be set", p)...)
}
