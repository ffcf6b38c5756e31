package registry

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// HorizontalPodAutoscalers, served as autoscaling/v2 (stored) and
// autoscaling/v1. One strategy serves both versions: v1 objects are
// defaulted as v1, then checked in their v2 form.
//
// metadata.generation starts at 1 and grows with every spec change
// (upstream's HPAGeneration, on by default in 1.37), which the
// autoscaler controller reports as status.observedGeneration.
//
// Validation is upstream's spec checks (replica bounds, scale target
// reference); the per-metric and behavior checks are not implemented.

// autoscalingKinds is HorizontalPodAutoscaler, stored as v2 and served as v2
// and v1.
func autoscalingKinds() []descriptor {
	s := Strategy{
		Default:        defaultHPA,
		Validate:       validateHPA,
		ValidateUpdate: func(obj, _ runtime.Object) field.ErrorList { return validateHPA(obj) },
	}
	return []descriptor{{gv: "autoscaling/v2", alsoServed: []string{"v1"}, resource: "horizontalpodautoscalers", kind: "HorizontalPodAutoscaler",
		namespaced: true, short: []string{"hpa"}, categories: all, status: statusReset, generation: true, strategy: s}}
}

var (
	scaleUpStabilization int32 = 0
	maxPolicySelect            = autoscalingv2.MaxChangePolicySelect
)

func defaultHPA(obj runtime.Object) {
	one := int32(1)
	switch h := obj.(type) {
	case *autoscalingv1.HorizontalPodAutoscaler:
		if h.Spec.MinReplicas == nil {
			h.Spec.MinReplicas = &one
		}
		// What the trip through storage does: no metric at all means 80%
		// CPU utilization.
		if _, other := h.Annotations[hpaMetricSpecsAnnotation]; !other && h.Spec.TargetCPUUtilizationPercentage == nil {
			cpu := int32(hpaDefaultCPUUtilization)
			h.Spec.TargetCPUUtilizationPercentage = &cpu
		}
	case *autoscalingv2.HorizontalPodAutoscaler:
		if h.Spec.MinReplicas == nil {
			h.Spec.MinReplicas = &one
		}
		if len(h.Spec.Metrics) == 0 {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(hpaDefaultCPUUtilization)}
		}
		if b := h.Spec.Behavior; b != nil {
			b.ScaleUp = withDefaultRules(b.ScaleUp, autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &scaleUpStabilization,
				SelectPolicy: &maxPolicySelect, Policies: []autoscalingv2.HPAScalingPolicy{
					{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
					{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}})
			b.ScaleDown = withDefaultRules(b.ScaleDown, autoscalingv2.HPAScalingRules{SelectPolicy: &maxPolicySelect,
				Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}})
		}
	}
}

// withDefaultRules is upstream's copyHPAScalingRules onto the defaults.
func withDefaultRules(from *autoscalingv2.HPAScalingRules, to autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if from == nil {
		return &to
	}
	if from.SelectPolicy != nil {
		to.SelectPolicy = from.SelectPolicy
	}
	if from.StabilizationWindowSeconds != nil {
		to.StabilizationWindowSeconds = from.StabilizationWindowSeconds
	}
	if from.Policies != nil {
		to.Policies = from.Policies
	}
	if from.Tolerance != nil {
		to.Tolerance = from.Tolerance
	}
	return &to
}

// validateHPA checks the spec in its v2 form, with upstream's paths and
// messages.
func validateHPA(obj runtime.Object) field.ErrorList {
	h, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if v1, isV1 := obj.(*autoscalingv1.HorizontalPodAutoscaler); isV1 {
		h, ok = &autoscalingv2.HorizontalPodAutoscaler{}, true
		if err := convertHPAv1ToV2(v1, h); err != nil {
			return field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations"), hpaMetricSpecsAnnotation, err.Error())}
		}
	}
	if !ok {
		return nil
	}
	spec, p := h.Spec, field.NewPath("spec")
	var errs field.ErrorList
	if spec.MinReplicas != nil && *spec.MinReplicas < 1 {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), *spec.MinReplicas, "must be greater than or equal to 1"))
	}
	if spec.MaxReplicas < 1 {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), spec.MaxReplicas, "must be greater than 0"))
	}
	if spec.MinReplicas != nil && spec.MaxReplicas < *spec.MinReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	ref, rp := spec.ScaleTargetRef, p.Child("scaleTargetRef")
	for _, f := range []struct{ name, value string }{{"kind", ref.Kind}, {"name", ref.Name}} {
		if f.value == "" {
			errs = append(errs, field.Required(rp.Child(f.name), ""))
			continue
		}
		for _, msg := range path.IsValidPathSegmentName(f.value) {
			errs = append(errs, field.Invalid(rp.Child(f.name), f.value, msg))
		}
	}
	return errs
}
