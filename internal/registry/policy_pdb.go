package registry

import (
	policyv1 "k8s.io/api/policy/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodDisruptionBudget validation (upstream ValidatePodDisruptionBudget and
// ValidatePodDisruptionBudgetStatusUpdate, through its strategies): an
// update must name the resourceVersion it replaces.
func pdbStrategy() Strategy {
	return Strategy{Validate: validatePDB, ValidateUpdate: validatePDBUpdate, RequireResourceVersion: true,
		Subresources: map[string]SubresourceStrategy{"status": {ValidateUpdate: validatePDBStatusUpdate}}}
}

var supportedUnhealthyPodEvictionPolicies = []string{string(policyv1.AlwaysAllow), string(policyv1.IfHealthyBudget)}

func validatePDB(obj runtime.Object) field.ErrorList {
	return validatePDBSpec(&obj.(*policyv1.PodDisruptionBudget).Spec, false)
}

// validatePDBUpdate: a selector already stored with label values invalid
// today may keep them.
func validatePDBUpdate(obj, old runtime.Object) field.ErrorList {
	return validatePDBSpec(&obj.(*policyv1.PodDisruptionBudget).Spec, selectorHasInvalidLabelValue(old.(*policyv1.PodDisruptionBudget).Spec.Selector))
}

func validatePDBSpec(spec *policyv1.PodDisruptionBudgetSpec, allowInvalidLabelValue bool) field.ErrorList {
	p := field.NewPath("spec")
	var errs field.ErrorList
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(p, internalPDBSpecOf(spec), "minAvailable and maxUnavailable cannot be both set"))
	}
	for _, v := range []struct {
		name  string
		value *intstr.IntOrString
	}{{"minAvailable", spec.MinAvailable}, {"maxUnavailable", spec.MaxUnavailable}} {
		if v.value != nil {
			errs = append(errs, validatePositiveIntOrPercent(*v.value, p.Child(v.name))...)
			errs = append(errs, notMoreThan100Percent(*v.value, p.Child(v.name))...)
		}
	}
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}
	errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, opts, p.Child("selector"))...)
	if pol := spec.UnhealthyPodEvictionPolicy; pol != nil && *pol != policyv1.AlwaysAllow && *pol != policyv1.IfHealthyBudget {
		errs = append(errs, field.NotSupported(p.Child("unhealthyPodEvictionPolicy"), *pol, supportedUnhealthyPodEvictionPolicies))
	}
	return errs
}

// internalPDBSpec is the spec as upstream's error shows it: its internal
// type, whose fields have no JSON names.
type internalPDBSpec struct {
	MinAvailable               *intstr.IntOrString
	Selector                   *metav1.LabelSelector
	MaxUnavailable             *intstr.IntOrString
	UnhealthyPodEvictionPolicy *policyv1.UnhealthyPodEvictionPolicyType
}

func internalPDBSpecOf(spec *policyv1.PodDisruptionBudgetSpec) internalPDBSpec {
	return internalPDBSpec{spec.MinAvailable, spec.Selector, spec.MaxUnavailable, spec.UnhealthyPodEvictionPolicy}
}

func selectorHasInvalidLabelValue(sel *metav1.LabelSelector) bool {
	return sel != nil && len(metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
}

// validatePDBStatusUpdate: the metadata change, the conditions, and counts
// that are not negative.
func validatePDBStatusUpdate(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
	status := &obj.(*policyv1.PodDisruptionBudget).Status
	p := field.NewPath("status")
	errs := ValidateObjectMetaUpdate(obj, old)
	errs = append(errs, metav1validation.ValidateConditions(status.Conditions, p.Child("conditions"))...)
	for _, c := range []struct {
		name  string
		value int32
	}{{"disruptionsAllowed", status.DisruptionsAllowed}, {"currentHealthy", status.CurrentHealthy},
		{"desiredHealthy", status.DesiredHealthy}, {"expectedPods", status.ExpectedPods}} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(c.value), p.Child(c.name))...)
	}
	return errs
}
