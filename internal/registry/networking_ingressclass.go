package registry

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// IngressClass validation, as upstream's ValidateIngressClass and
// ValidateIngressClassUpdate: a domain-prefixed controller name of at most
// 250 bytes that never changes, and an optional parameters reference
// whose scope says whether it names a namespace. 1.37 enforces beta
// declarative rules requiring the reference's kind and name (unless
// unchanged on update); those errors replace the handwritten ones and come
// last.

const maxIngressClassControllerLen = 250

var (
	ingressClassControllerPath = specPath.Child("controller")
	ingressClassParametersPath = specPath.Child("parameters")
	ingressClassScopes         = []string{networkingv1.IngressClassParametersReferenceScopeCluster, networkingv1.IngressClassParametersReferenceScopeNamespace}
)

func validateIngressClass(obj runtime.Object) field.ErrorList {
	spec := &obj.(*networkingv1.IngressClass).Spec
	return withEnforcedDeclarative(validateIngressClassSpec(spec), declarativeIngressClassParameters(spec.Parameters, nil))
}

// validateIngressClassUpdate: the controller stays, then the new object is
// checked whole again, metadata included, as upstream does.
func validateIngressClassUpdate(obj, old runtime.Object) field.ErrorList {
	ic, was := obj.(*networkingv1.IngressClass), old.(*networkingv1.IngressClass)
	errs := apivalidation.ValidateImmutableField(ic.Spec.Controller, was.Spec.Controller, ingressClassControllerPath)
	errs = append(errs, ValidateObjectMeta(ic, false, apivalidation.NameIsDNSSubdomain)...)
	errs = append(errs, validateIngressClassSpec(&ic.Spec)...)
	return withEnforcedDeclarative(errs, declarativeIngressClassParameters(ic.Spec.Parameters, was.Spec.Parameters))
}

func validateIngressClassSpec(spec *networkingv1.IngressClassSpec) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Controller) > maxIngressClassControllerLen {
		errs = append(errs, field.TooLong(ingressClassControllerPath, "", maxIngressClassControllerLen))
	}
	errs = append(errs, validation.IsDomainPrefixedPath(ingressClassControllerPath, spec.Controller)...)
	if spec.Parameters != nil {
		errs = append(errs, validateIngressClassParameters(spec.Parameters, ingressClassParametersPath)...)
	}
	return errs
}

func validateIngressClassParameters(ref *networkingv1.IngressClassParametersReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.APIGroup != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*ref.APIGroup) {
			errs = append(errs, field.Invalid(p.Child("apiGroup"), *ref.APIGroup, msg))
		}
	}
	errs = append(errs, markRequiredCovered(requiredPathSegment(ref.Kind, p.Child("kind")))...)
	errs = append(errs, markRequiredCovered(requiredPathSegment(ref.Name, p.Child("name")))...)
	if ref.Scope == nil {
		return append(errs, field.Required(p.Child("scope"), ""))
	}
	return append(errs, validateIngressClassScope(*ref.Scope, ref.Namespace, p)...)
}

// validateIngressClassScope: a namespaced reference names a valid
// namespace, a cluster-wide one none.
func validateIngressClassScope(scope string, namespace *string, p *field.Path) field.ErrorList {
	switch {
	case scope == networkingv1.IngressClassParametersReferenceScopeNamespace && namespace == nil:
		return field.ErrorList{field.Required(p.Child("namespace"), "`parameters.scope` is set to 'Namespace'")}
	case scope == networkingv1.IngressClassParametersReferenceScopeNamespace:
		var errs field.ErrorList
		for _, msg := range apivalidation.ValidateNamespaceName(*namespace, false) {
			errs = append(errs, field.Invalid(p.Child("namespace"), *namespace, msg))
		}
		return errs
	case scope == networkingv1.IngressClassParametersReferenceScopeCluster && namespace != nil:
		return field.ErrorList{field.Forbidden(p.Child("namespace"), "`parameters.scope` is set to 'Cluster'")}
	case scope != networkingv1.IngressClassParametersReferenceScopeCluster && scope != networkingv1.IngressClassParametersReferenceScopeNamespace:
		return field.ErrorList{field.NotSupported(p.Child("scope"), scope, ingressClassScopes)}
	}
	return nil
}

// markRequiredCovered marks the Required errors of errs as ones a
// declarative rule repeats.
func markRequiredCovered(errs field.ErrorList) field.ErrorList {
	for _, e := range errs {
		if e.Type == field.ErrorTypeRequired {
			e.CoveredByDeclarative = true
		}
	}
	return errs
}

// declarativeIngressClassParameters are the errors of the beta declarative
// rules of spec.parameters: its kind and name are required, each checked
// only when new or changed (old is nil on create).
func declarativeIngressClassParameters(ref, old *networkingv1.IngressClassParametersReference) field.ErrorList {
	if ref == nil {
		return nil
	}
	ctx, op := context.Background(), operation.Operation{Type: operation.Create}
	var errs field.ErrorList
	if old == nil || old.Kind != ref.Kind {
		errs = append(errs, validate.RequiredValue(ctx, op, ingressClassParametersPath.Child("kind"), &ref.Kind, nil)...)
	}
	if old == nil || old.Name != ref.Name {
		errs = append(errs, validate.RequiredValue(ctx, op, ingressClassParametersPath.Child("name"), &ref.Name, nil)...)
	}
	return errs.MarkBeta()
}
