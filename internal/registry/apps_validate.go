package registry

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// apps/v1 validation (upstream pkg/apis/apps/validation and the selector
// immutability the apps strategies add on update).

var (
	selectorPath = specPath.Child("selector")
	templatePath = specPath.Child("template")
)

// validateWorkloadSelector requires a non-empty, valid selector.
func validateWorkloadSelector(sel *metav1.LabelSelector, kind string) field.ErrorList {
	if sel == nil {
		return field.ErrorList{field.Required(selectorPath, "")}
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, selectorPath)
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(selectorPath, sel, "empty selector is invalid for "+kind))
	}
	return errs
}

// validateReplicaSetTemplate checks a replicated pod template: it must match
// the selector, be a valid pod template and restart Always.
func validateReplicaSetTemplate(sel *metav1.LabelSelector, t *corev1.PodTemplateSpec, kind string) field.ErrorList {
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return field.ErrorList{field.Invalid(selectorPath, sel, "invalid label selector")}
	}
	var errs field.ErrorList
	if !selector.Empty() && !selector.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(templatePath.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, validatePodTemplateSpec(t, templatePath)...)
	return append(errs, validateControllerTemplateSpec(&t.Spec, templatePath.Child("spec"), kind)...)
}

func validateDeployment(obj runtime.Object) field.ErrorList {
	spec := &obj.(*appsv1.Deployment).Spec
	errs := apivalidation.ValidateNonnegativeField(int64(derefInt32(spec.Replicas)), specPath.Child("replicas"))
	errs = append(errs, validateWorkloadSelector(spec.Selector, "deployment")...)
	errs = append(errs, validateReplicaSetTemplate(spec.Selector, &spec.Template, "ReplicaSet")...)
	errs = append(errs, validateDeploymentStrategy(&spec.Strategy, specPath.Child("strategy"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*spec.RevisionHistoryLimit), specPath.Child("revisionHistoryLimit"))...)
	}
	if p := spec.ProgressDeadlineSeconds; p != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*p), specPath.Child("progressDeadlineSeconds"))...)
		if *p <= spec.MinReadySeconds {
			errs = append(errs, field.Invalid(specPath.Child("progressDeadlineSeconds"), p, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

func validateDeploymentStrategy(s *appsv1.DeploymentStrategy, path *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(path.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(path.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		ru, rp := s.RollingUpdate, path.Child("rollingUpdate")
		unavailable, surge := derefIntOrString(ru.MaxUnavailable), derefIntOrString(ru.MaxSurge)
		errs := validatePositiveIntOrPercent(unavailable, rp.Child("maxUnavailable"))
		errs = append(errs, validatePositiveIntOrPercent(surge, rp.Child("maxSurge"))...)
		if intOrPercentValue(unavailable) == 0 && intOrPercentValue(surge) == 0 {
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), unavailable, "may not be 0 when `maxSurge` is 0"))
		}
		return append(errs, notMoreThan100Percent(unavailable, rp.Child("maxUnavailable"))...)
	default:
		return field.ErrorList{field.NotSupported(path, s, []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)})}
	}
	return nil
}

func validateReplicaSet(obj runtime.Object) field.ErrorList {
	spec := &obj.(*appsv1.ReplicaSet).Spec
	errs := apivalidation.ValidateNonnegativeField(int64(derefInt32(spec.Replicas)), specPath.Child("replicas"))
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	errs = append(errs, validateWorkloadSelector(spec.Selector, "deployment")...) // sic: upstream says deployment
	return append(errs, validateReplicaSetTemplate(spec.Selector, &spec.Template, "ReplicaSet")...)
}

func validateDaemonSet(obj runtime.Object) field.ErrorList {
	spec := &obj.(*appsv1.DaemonSet).Spec
	errs := metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, selectorPath)
	if sel, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !sel.Matches(labels.Set(spec.Template.Labels)) {
		errs = append(errs, field.Invalid(templatePath.Child("metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	if spec.Selector != nil && len(spec.Selector.MatchLabels)+len(spec.Selector.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(selectorPath, spec.Selector, "empty selector is invalid for daemonset"))
	}
	errs = append(errs, validatePodTemplateSpec(&spec.Template, templatePath)...)
	errs = append(errs, validateControllerTemplateSpec(&spec.Template.Spec, templatePath.Child("spec"), "DaemonSet")...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	errs = append(errs, validateDaemonSetUpdateStrategy(&spec.UpdateStrategy, specPath.Child("updateStrategy"))...)
	if spec.RevisionHistoryLimit != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*spec.RevisionHistoryLimit), specPath.Child("revisionHistoryLimit"))...)
	}
	return errs
}

func validateDaemonSetUpdateStrategy(s *appsv1.DaemonSetUpdateStrategy, path *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
		return nil
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(path.Child("rollingUpdate"), "")}
		}
		rp := path.Child("rollingUpdate")
		unavailable, surge := derefIntOrString(s.RollingUpdate.MaxUnavailable), derefIntOrString(s.RollingUpdate.MaxSurge)
		errs := validatePositiveIntOrPercent(unavailable, rp.Child("maxUnavailable"))
		errs = append(errs, validatePositiveIntOrPercent(surge, rp.Child("maxSurge"))...)
		errs = append(errs, notMoreThan100Percent(unavailable, rp.Child("maxUnavailable"))...)
		errs = append(errs, notMoreThan100Percent(surge, rp.Child("maxSurge"))...)
		hasUnavailable, hasSurge := intOrPercentValue(unavailable) != 0, intOrPercentValue(surge) != 0
		switch {
		case hasUnavailable && hasSurge:
			errs = append(errs, field.Invalid(rp.Child("maxSurge"), s.RollingUpdate.MaxSurge, "may not be set when maxUnavailable is non-zero"))
		case !hasUnavailable && !hasSurge:
			errs = append(errs, field.Required(rp.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
		}
		return errs
	}
	return field.ErrorList{field.NotSupported(path, s, []string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)})}
}

// validateSelectorImmutable is the apps/v1 rule that a selector never
// changes.
func validateSelectorImmutable(sel, old *metav1.LabelSelector) field.ErrorList {
	return apivalidation.ValidateImmutableField(sel, old, selectorPath)
}

func validateDeploymentUpdate(obj, old runtime.Object) field.ErrorList {
	return append(validateDeployment(obj), validateSelectorImmutable(obj.(*appsv1.Deployment).Spec.Selector, old.(*appsv1.Deployment).Spec.Selector)...)
}

func validateReplicaSetUpdate(obj, old runtime.Object) field.ErrorList {
	return append(validateReplicaSet(obj), validateSelectorImmutable(obj.(*appsv1.ReplicaSet).Spec.Selector, old.(*appsv1.ReplicaSet).Spec.Selector)...)
}

func validateDaemonSetUpdate(obj, old runtime.Object) field.ErrorList {
	return append(validateDaemonSet(obj), validateSelectorImmutable(obj.(*appsv1.DaemonSet).Spec.Selector, old.(*appsv1.DaemonSet).Spec.Selector)...)
}

func derefIntOrString(p *intstr.IntOrString) intstr.IntOrString {
	if p == nil {
		return intstr.FromInt32(0)
	}
	return *p
}

func validatePositiveIntOrPercent(v intstr.IntOrString, path *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.String:
		var errs field.ErrorList
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			errs = append(errs, field.Invalid(path, v, msg))
		}
		return errs
	case intstr.Int:
		return apivalidation.ValidateNonnegativeField(int64(v.IntValue()), path)
	}
	return field.ErrorList{field.Invalid(path, v, "must be an integer or percentage (e.g '5%%')")}
}

func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(validation.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}

func intOrPercentValue(v intstr.IntOrString) int {
	if n, ok := percentValue(v); ok {
		return n
	}
	return v.IntValue()
}

func notMoreThan100Percent(v intstr.IntOrString, path *field.Path) field.ErrorList {
	if n, ok := percentValue(v); ok && n > 100 {
		return field.ErrorList{field.Invalid(path, v, "must not be greater than 100%")}
	}
	return nil
}

// statefulSetUpdateForbidden is the error for changing an immutable
// StatefulSet spec field.
const statefulSetUpdateForbidden = "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"

func validateStatefulSet(obj runtime.Object) field.ErrorList {
	spec := &obj.(*appsv1.StatefulSet).Spec
	var errs field.ErrorList
	switch spec.PodManagementPolicy {
	case "":
		errs = append(errs, field.Required(specPath.Child("podManagementPolicy"), ""))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(specPath.Child("podManagementPolicy"), spec.PodManagementPolicy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}
	errs = append(errs, validateStatefulSetStrategy(&spec.UpdateStrategy, specPath.Child("updateStrategy"))...)
	if p := spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		pp := specPath.Child("persistentVolumeClaimRetentionPolicy")
		for _, f := range []struct {
			name  string
			value appsv1.PersistentVolumeClaimRetentionPolicyType
		}{{"whenDeleted", p.WhenDeleted}, {"whenScaled", p.WhenScaled}} {
			if f.value != appsv1.RetainPersistentVolumeClaimRetentionPolicyType && f.value != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
				errs = append(errs, field.NotSupported(pp.Child(f.name), f.value, []string{string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)}))
			}
		}
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(derefInt32(spec.Replicas)), specPath.Child("replicas"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	if spec.Ordinals != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(spec.Ordinals.Start), specPath.Child("ordinals.start"))...)
	}
	errs = append(errs, validateWorkloadSelector(spec.Selector, "statefulset")...)
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		errs = append(errs, field.Invalid(selectorPath, spec.Selector, ""))
	} else {
		// Upstream checks only labels and annotations of the template here.
		t := &spec.Template
		if !selector.Empty() && !selector.Matches(labels.Set(t.Labels)) {
			errs = append(errs, field.Invalid(templatePath.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
		}
		errs = append(errs, metav1validation.ValidateLabels(t.Labels, templatePath.Child("labels"))...)
		errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, templatePath.Child("annotations"))...)
		errs = append(errs, validatePodAnnotations(t.Annotations, &t.Spec, templatePath.Child("annotations"), false)...)
	}
	return append(errs, validateControllerTemplateSpec(&spec.Template.Spec, templatePath.Child("spec"), "StatefulSet")...)
}

func validateStatefulSetStrategy(s *appsv1.StatefulSetUpdateStrategy, path *field.Path) field.ErrorList {
	switch s.Type {
	case "":
		return field.ErrorList{field.Required(path, "")}
	case appsv1.OnDeleteStatefulSetStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Invalid(path.Child("rollingUpdate"), s.RollingUpdate, fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType))}
		}
		return nil
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if s.RollingUpdate == nil {
			return nil
		}
		rp := path.Child("rollingUpdate")
		errs := apivalidation.ValidateNonnegativeField(int64(derefInt32(s.RollingUpdate.Partition)), rp.Child("partition"))
		if mu := s.RollingUpdate.MaxUnavailable; mu != nil {
			errs = append(errs, validatePositiveIntOrPercent(*mu, rp.Child("maxUnavailable"))...)
			if intOrPercentValue(*mu) == 0 {
				errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), *mu, "cannot be 0"))
			}
			errs = append(errs, notMoreThan100Percent(*mu, rp.Child("maxUnavailable"))...)
		}
		return errs
	}
	return field.ErrorList{field.Invalid(path, s, fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType))}
}

func validateStatefulSetUpdate(obj, old runtime.Object) field.ErrorList {
	ss, oldSS := obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet)
	errs := validateStatefulSet(obj)
	clone := ss.Spec.DeepCopy()
	clone.Replicas = oldSS.Spec.Replicas
	clone.Template = oldSS.Spec.Template
	clone.UpdateStrategy = oldSS.Spec.UpdateStrategy
	clone.MinReadySeconds = oldSS.Spec.MinReadySeconds
	clone.Ordinals = oldSS.Spec.Ordinals
	clone.PersistentVolumeClaimRetentionPolicy = oldSS.Spec.PersistentVolumeClaimRetentionPolicy
	if !apiequality.Semantic.DeepEqual(clone, &oldSS.Spec) {
		errs = append(errs, field.Forbidden(specPath, statefulSetUpdateForbidden))
	}
	return errs
}
