package apiserver

import (
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// invalidReview is upstream's 422 for an access review: the group with an
// empty kind (the internal object it validates has no TypeMeta) and no
// name, e.g. `.authorization.k8s.io "" is invalid: ...`.
func invalidReview(errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: authorizationv1.GroupName}, "", errs)
}

func checkSubjectAccessReview(_ *request, obj runtime.Object) error {
	sar := obj.(*authorizationv1.SubjectAccessReview)
	errs := validateSubjectSpec(sar.Spec)
	if !metadataEmpty(sar.ObjectMeta, false) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, "must be empty"))
	}
	if len(errs) > 0 {
		return invalidReview(errs)
	}
	return nil
}

func checkSelfSubjectAccessReview(_ *request, obj runtime.Object) error {
	sar := obj.(*authorizationv1.SelfSubjectAccessReview)
	errs := validateUnion(sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	errs = append(errs, validateSelectors(sar.Spec.ResourceAttributes)...)
	if !metadataEmpty(sar.ObjectMeta, false) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, "must be empty"))
	}
	if len(errs) > 0 {
		return invalidReview(errs)
	}
	return nil
}

// checkLocalSubjectAccessReview validates a LocalSubjectAccessReview, whose
// metadata.namespace is by now the request's.
func checkLocalSubjectAccessReview(rq *request, obj runtime.Object) error {
	sar := obj.(*authorizationv1.LocalSubjectAccessReview)
	spec := sar.Spec
	errs := validateSubjectSpec(spec)
	if !metadataEmpty(sar.ObjectMeta, true) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, "must be empty except for namespace"))
	}
	if ra := spec.ResourceAttributes; ra != nil && ra.Namespace != sar.Namespace {
		errs = append(errs, field.Invalid(field.NewPath("spec.resourceAttributes.namespace"), ra.Namespace, "must match metadata.namespace"))
	}
	if spec.NonResourceAttributes != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec.nonResourceAttributes"), internalNonResource(spec.NonResourceAttributes), "disallowed on this kind of request"))
	}
	if len(errs) > 0 {
		return invalidReview(errs)
	}
	ns := rq.info.Namespace
	if ns == "" {
		return apierrors.NewBadRequest(fmt.Sprintf("namespace is required on this type: %v", ns))
	}
	if ns != sar.Namespace {
		return apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", ns))
	}
	return nil
}

// validateSubjectSpec checks the spec of a (local) SubjectAccessReview: the
// attributes, then the subject, then the selectors.
func validateSubjectSpec(spec authorizationv1.SubjectAccessReviewSpec) field.ErrorList {
	errs := validateUnion(spec.ResourceAttributes, spec.NonResourceAttributes)
	if spec.User == "" && len(spec.Groups) == 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "user"), spec.User, "at least one of user or group must be specified"))
	}
	return append(errs, validateSelectors(spec.ResourceAttributes)...)
}

// validateUnion wants exactly one kind of attributes.
func validateUnion(res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) field.ErrorList {
	if (res == nil) == (nonRes == nil) {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), internalNonResource(nonRes), "exactly one of nonResourceAttributes or resourceAttributes must be specified")}
	}
	return nil
}

// validateSelectors checks the field and label selectors of res.
func validateSelectors(res *authorizationv1.ResourceAttributes) field.ErrorList {
	if res == nil {
		return nil
	}
	var errs field.ErrorList
	path := field.NewPath("spec.resourceAttributes")
	if fs := res.FieldSelector; fs != nil {
		p := path.Child("fieldSelector")
		errs = append(errs, validateSelectorForm(fs.RawSelector, len(fs.Requirements), p)...)
		opts := metav1validation.FieldSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
		for i, req := range fs.Requirements {
			errs = append(errs, metav1validation.ValidateFieldSelectorRequirement(req, opts, p.Child("requirements").Index(i))...)
		}
	}
	if ls := res.LabelSelector; ls != nil {
		p := path.Child("labelSelector")
		errs = append(errs, validateSelectorForm(ls.RawSelector, len(ls.Requirements), p)...)
		opts := metav1validation.LabelSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
		for i, req := range ls.Requirements {
			errs = append(errs, metav1validation.ValidateLabelSelectorRequirement(req, opts, p.Child("requirements").Index(i))...)
		}
	}
	return errs
}

// validateSelectorForm wants a selector given either raw or as
// requirements, not both and not neither.
func validateSelectorForm(raw string, requirements int, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if raw != "" && requirements > 0 {
		errs = append(errs, field.Invalid(path.Child("rawSelector"), raw, "may not specified at the same time as requirements"))
	}
	if raw == "" && requirements == 0 {
		errs = append(errs, field.Required(path.Child("requirements"), fmt.Sprintf("when %s is specified, requirements or rawSelector is required", path)))
	}
	return errs
}

// metadataEmpty reports whether m sets nothing but managedFields (and,
// when allowed, the namespace).
func metadataEmpty(m metav1.ObjectMeta, namespaceAllowed bool) bool {
	m.ManagedFields = nil
	if namespaceAllowed {
		m.Namespace = ""
	}
	return apiequality.Semantic.DeepEqual(metav1.ObjectMeta{}, m)
}

func checkSelfSubjectRulesReview(_ *request, obj runtime.Object) error {
	if obj.(*authorizationv1.SelfSubjectRulesReview).Spec.Namespace == "" {
		return apierrors.NewBadRequest("no namespace on request")
	}
	return nil
}

// nonResourceValue has the shape of upstream's internal
// NonResourceAttributes, which its errors show: fields named as in Go.
type nonResourceValue struct{ Path, Verb string }

// internalNonResource is a as upstream's validation errors show it, null
// when nil.
func internalNonResource(a *authorizationv1.NonResourceAttributes) *nonResourceValue {
	if a == nil {
		return nil
	}
	return &nonResourceValue{Path: a.Path, Verb: a.Verb}
}
