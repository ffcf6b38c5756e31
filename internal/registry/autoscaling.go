package registry

import (
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
// Validation is upstream's spec checks: replica bounds, the scale target
// reference, each metric's one source and target, the behavior's rules
// (autoscaling_validate.go). The horizontal pod autoscaler relies on them.

// autoscalingKinds is HorizontalPodAutoscaler, stored as v2 and served as v2
// and v1.
func autoscalingKinds() []descriptor {
	s := Strategy{
		Default:        defaultHPA,
		Validate:       func(obj runtime.Object) field.ErrorList { return validateHPAUpdate(obj, nil) },
		ValidateUpdate: validateHPAUpdate,
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

// validateHPA checks a new autoscaler.
func validateHPA(obj runtime.Object) field.ErrorList { return validateHPAUpdate(obj, nil) }

// validateHPAUpdate checks the spec in its v2 form, with upstream's paths
// and messages (as kube-apiserver 1.37.2 answers them, declarative
// validation's bounds included: minReplicas may be 0, which needs an
// Object or External metric). old (nil on create) lets an update keep a
// scale target apiVersion it did not change, as upstream's options do.
func validateHPAUpdate(obj, old runtime.Object) field.ErrorList {
	h, err := hpaAsV2(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations"), hpaMetricSpecsAnnotation, err.Error())}
	}
	if h == nil {
		return nil
	}
	prev, _ := hpaAsV2(old)
	spec, p := h.Spec, field.NewPath("spec")
	errs := validateScaleTargetRef(spec.ScaleTargetRef, prev, p.Child("scaleTargetRef"))
	if spec.MinReplicas != nil && spec.MaxReplicas < *spec.MinReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	if spec.MinReplicas != nil && *spec.MinReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), *spec.MinReplicas, "must be greater than or equal to 0"))
	}
	switch {
	case spec.MaxReplicas == 0:
		errs = append(errs, field.Required(p.Child("maxReplicas"), ""))
	case spec.MaxReplicas < 0:
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to 1"))
	}
	errs = append(errs, validateHPAMetrics(spec.Metrics, spec.MinReplicas, p.Child("metrics"))...)
	return append(errs, validateHPABehavior(spec.Behavior, p.Child("behavior"))...)
}

// hpaAsV2 is obj as a v2 autoscaler (nil for another kind, or nil).
func hpaAsV2(obj runtime.Object) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	switch o := obj.(type) {
	case *autoscalingv2.HorizontalPodAutoscaler:
		return o, nil
	case *autoscalingv1.HorizontalPodAutoscaler:
		h := &autoscalingv2.HorizontalPodAutoscaler{}
		return h, convertHPAv1ToV2(o, h)
	}
	return nil, nil
}

// validateScaleTargetRef checks the reference's kind and name, and its
// apiVersion names a group (a ReplicationController's may not), unless an
// update keeps the old kind and apiVersion.
func validateScaleTargetRef(ref autoscalingv2.CrossVersionObjectReference, old *autoscalingv2.HorizontalPodAutoscaler, p *field.Path) field.ErrorList {
	errs := validateCrossVersionRef(ref.Kind, ref.Name, p)
	if old != nil && old.Spec.ScaleTargetRef.APIVersion == ref.APIVersion && old.Spec.ScaleTargetRef.Kind == ref.Kind {
		return errs
	}
	if err := checkAPIVersion(ref.APIVersion, ref.Kind == "ReplicationController"); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	return errs
}

// checkAPIVersion: apiVersion parses as a group/version, with a group
// unless emptyGroup allows none.
func checkAPIVersion(apiVersion string, emptyGroup bool) error {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return err
	}
	if !emptyGroup && gv.Group == "" {
		return fmt.Errorf("apiVersion must specify API group")
	}
	return nil
}
