package registry

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The bounds of an autoscaler's behavior (upstream's
// MaxStabilizationWindowSeconds and MaxPeriodSeconds).
const (
	maxStabilizationWindowSeconds = 3600
	maxScalingPolicyPeriodSeconds = 1800
)

var (
	metricSourceTypes = []string{string(autoscalingv2.ContainerResourceMetricSourceType), string(autoscalingv2.ExternalMetricSourceType),
		string(autoscalingv2.ObjectMetricSourceType), string(autoscalingv2.PodsMetricSourceType), string(autoscalingv2.ResourceMetricSourceType)}
	selectPolicies     = []string{string(autoscalingv2.DisabledPolicySelect), string(autoscalingv2.MaxChangePolicySelect), string(autoscalingv2.MinChangePolicySelect)}
	scalingPolicyTypes = []string{string(autoscalingv2.PercentScalingPolicy), string(autoscalingv2.PodsScalingPolicy)}
)

// validateHPAMetrics checks each metric as upstream's validateMetrics:
// its type, the one source of that type, and the source's fields. A
// minReplicas of 0 needs an Object or External metric.
func validateHPAMetrics(metrics []autoscalingv2.MetricSpec, minReplicas *int32, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	scalesToZero := false
	for i, m := range metrics {
		errs = append(errs, validateHPAMetric(m, p.Index(i))...)
		scalesToZero = scalesToZero || m.Type == autoscalingv2.ObjectMetricSourceType || m.Type == autoscalingv2.ExternalMetricSourceType
	}
	if minReplicas != nil && *minReplicas == 0 && !scalesToZero {
		errs = append(errs, field.Forbidden(p, "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return errs
}

// metricSource is one of a metric's source fields: its JSON name,
// whether it is set, and its checks.
type metricSource struct {
	name     string
	typ      autoscalingv2.MetricSourceType
	set      bool
	validate func(*field.Path) field.ErrorList
}

func metricSources(m autoscalingv2.MetricSpec) []metricSource {
	return []metricSource{
		{"object", autoscalingv2.ObjectMetricSourceType, m.Object != nil, func(p *field.Path) field.ErrorList { return validateObjectMetric(m.Object, p) }},
		{"external", autoscalingv2.ExternalMetricSourceType, m.External != nil, func(p *field.Path) field.ErrorList { return validateExternalMetric(m.External, p) }},
		{"pods", autoscalingv2.PodsMetricSourceType, m.Pods != nil, func(p *field.Path) field.ErrorList { return validatePodsMetric(m.Pods, p) }},
		{"resource", autoscalingv2.ResourceMetricSourceType, m.Resource != nil, func(p *field.Path) field.ErrorList {
			return validateResourceMetric(m.Resource.Name, m.Resource.Target, false, p)
		}},
		{"containerResource", autoscalingv2.ContainerResourceMetricSourceType, m.ContainerResource != nil, func(p *field.Path) field.ErrorList {
			return validateContainerResourceMetric(m.ContainerResource, p)
		}},
	}
}

// validateHPAMetric: the first source set is checked; the source the type
// names must be set, and no other.
func validateHPAMetric(m autoscalingv2.MetricSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	}
	sources := metricSources(m)
	known := false
	for _, s := range sources {
		known = known || s.typ == m.Type
	}
	if !known {
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, metricSourceTypes))
	}
	var present []string
	for _, s := range sources {
		if !s.set {
			continue
		}
		present = append(present, s.name)
		if len(present) == 1 {
			errs = append(errs, s.validate(p.Child(s.name))...)
		}
	}
	expected := ""
	for _, s := range sources {
		if s.typ != m.Type {
			continue
		}
		expected = s.name
		if !s.set {
			errs = append(errs, field.Required(p.Child(s.name), "must populate information for the given metric source"))
		}
	}
	if !known { // a second time, as upstream's switch on the type adds it again
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, metricSourceTypes))
	}
	if len(present) > 1 {
		for _, name := range present {
			if name != expected {
				errs = append(errs, field.Forbidden(p.Child(name), "must populate the given metric source only"))
			}
		}
	}
	return errs
}

func validateObjectMetric(src *autoscalingv2.ObjectMetricSource, p *field.Path) field.ErrorList {
	ref := src.DescribedObject
	errs := validateCrossVersionRef(ref.Kind, ref.Name, p.Child("describedObject"))
	if err := checkAPIVersion(ref.APIVersion, true); err != nil {
		errs = append(errs, field.Invalid(p.Child("describedObject", "apiVersion"), ref.APIVersion, err.Error()))
	}
	errs = append(errs, validateMetricIdentifier(src.Metric, p.Child("metric"))...)
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return errs
}

func validateExternalMetric(src *autoscalingv2.ExternalMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if src.Target.Value != nil && src.Target.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return errs
}

func validatePodsMetric(src *autoscalingv2.PodsMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return errs
}

func validateContainerResourceMetric(src *autoscalingv2.ContainerResourceMetricSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if src.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	} else {
		errs = append(errs, validateContainerResourceName(src.Name, p.Child("name"))...)
	}
	if src.Container == "" {
		errs = append(errs, field.Required(p.Child("container"), "must specify a container"))
	} else {
		for _, msg := range validation.IsDNS1123Label(src.Container) {
			errs = append(errs, field.Invalid(p.Child("container"), src.Container, msg))
		}
	}
	return append(errs, validateResourceMetric(src.Name, src.Target, true, p)...)
}

// validateResourceMetric checks a resource metric's target (and, unless
// the container resource check did, that it names a resource).
func validateResourceMetric(name corev1.ResourceName, t autoscalingv2.MetricTarget, named bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !named && name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	}
	errs = append(errs, validateMetricTarget(t, p.Child("target"))...)
	if t.AverageUtilization == nil && t.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if t.AverageUtilization != nil && t.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

func validateMetricTarget(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	}
	switch t.Type {
	case autoscalingv2.UtilizationMetricType, autoscalingv2.ValueMetricType, autoscalingv2.AverageValueMetricType:
	default:
		errs = append(errs, field.Invalid(p.Child("type"), t.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue, "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, p *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "must specify a metric name")}
	}
	var errs field.ErrorList
	for _, msg := range path.IsValidPathSegmentName(id.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), id.Name, msg))
	}
	return errs
}

// validateHPABehavior checks the scale-up and scale-down rules as
// upstream's validateBehavior.
func validateHPABehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior, p *field.Path) field.ErrorList {
	if b == nil {
		return nil
	}
	return append(validateScalingRules(b.ScaleUp, p.Child("scaleUp")), validateScalingRules(b.ScaleDown, p.Child("scaleDown"))...)
}

func validateScalingRules(r *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil && *w < 0 {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), w, "must be greater than or equal to zero"))
	}
	if w := r.StabilizationWindowSeconds; w != nil && *w > maxStabilizationWindowSeconds {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), w, fmt.Sprintf("must be less than or equal to %v", maxStabilizationWindowSeconds)))
	}
	if s := r.SelectPolicy; s != nil && *s != autoscalingv2.MaxChangePolicySelect && *s != autoscalingv2.MinChangePolicySelect && *s != autoscalingv2.DisabledPolicySelect {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), s, selectPolicies))
	}
	policies := p.Child("policies")
	if len(r.Policies) == 0 {
		errs = append(errs, field.Required(policies, "must specify at least one Policy"))
	}
	for i, policy := range r.Policies {
		errs = append(errs, validateScalingPolicy(policy, policies.Index(i))...)
	}
	if r.Tolerance != nil && r.Tolerance.Sign() < 0 {
		errs = append(errs, field.Invalid(p.Child("tolerance"), r.Tolerance.String(), "must be greater than or equal to 0"))
	}
	return errs
}

func validateScalingPolicy(policy autoscalingv2.HPAScalingPolicy, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if policy.Type != autoscalingv2.PodsScalingPolicy && policy.Type != autoscalingv2.PercentScalingPolicy {
		errs = append(errs, field.NotSupported(p.Child("type"), policy.Type, scalingPolicyTypes))
	}
	if policy.Value <= 0 {
		errs = append(errs, field.Invalid(p.Child("value"), policy.Value, "must be greater than zero"))
	}
	if policy.PeriodSeconds <= 0 {
		errs = append(errs, field.Invalid(p.Child("periodSeconds"), policy.PeriodSeconds, "must be greater than zero"))
	}
	if policy.PeriodSeconds > maxScalingPolicyPeriodSeconds {
		errs = append(errs, field.Invalid(p.Child("periodSeconds"), policy.PeriodSeconds, fmt.Sprintf("must be less than or equal to %v", maxScalingPolicyPeriodSeconds)))
	}
	return errs
}

// validateCrossVersionRef checks a reference's kind and name as path
// segments (both required).
func validateCrossVersionRef(kind, name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ name, value string }{{"kind", kind}, {"name", name}} {
		if f.value == "" {
			errs = append(errs, field.Required(p.Child(f.name), ""))
			continue
		}
		for _, msg := range path.IsValidPathSegmentName(f.value) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, msg))
		}
	}
	return errs
}
