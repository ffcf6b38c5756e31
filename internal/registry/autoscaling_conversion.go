package registry

import (
	"encoding/json"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// Conversion of HorizontalPodAutoscalers between autoscaling/v1 and
// autoscaling/v2 (the storage version, which carries what upstream's
// internal version does), as upstream's pkg/apis/autoscaling/v1/conversion.go:
// v1's targetCPUUtilizationPercentage is v2's CPU-utilization resource
// metric; every other metric, the current metrics and the conditions ride
// in v1 as JSON annotations, so a v2 object survives a round trip through
// v1 (behavior excepted: v1 has no place for it). The functions are
// registered in Scheme (scheme.go), so Scheme.Convert and ConvertToVersion work too.

// The round-trip annotations of autoscaling/v1.
const (
	hpaMetricSpecsAnnotation    = "autoscaling.alpha.kubernetes.io/metrics"
	hpaMetricStatusesAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	hpaConditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	hpaDefaultCPUUtilization    = 80
)

func isCPUUtilization(m autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
		m.Resource.Target.AverageUtilization != nil
}

// convertHPAv2ToV1 writes in as out.
func convertHPAv2ToV1(in *autoscalingv2.HorizontalPodAutoscaler, out *autoscalingv1.HorizontalPodAutoscaler) error {
	*out = autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: *in.ObjectMeta.DeepCopy()}
	out.APIVersion, out.Kind = autoscalingv1.SchemeGroupVersion.String(), "HorizontalPodAutoscaler"
	out.Annotations = withoutRoundTripAnnotations(out.Annotations)
	s := in.Spec
	out.Spec = autoscalingv1.HorizontalPodAutoscalerSpec{MinReplicas: s.MinReplicas, MaxReplicas: s.MaxReplicas,
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(s.ScaleTargetRef)}
	var other []autoscalingv1.MetricSpec
	seenCPU := false
	for _, m := range s.Metrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && !seenCPU {
			seenCPU = true
			if u := m.Resource.Target.AverageUtilization; u != nil {
				out.Spec.TargetCPUUtilizationPercentage = &[]int32{*u}[0]
			}
		}
		if !isCPUUtilization(m) {
			other = append(other, metricSpecToV1(m))
		}
	}
	st := in.Status
	out.Status = autoscalingv1.HorizontalPodAutoscalerStatus{ObservedGeneration: st.ObservedGeneration, LastScaleTime: st.LastScaleTime,
		CurrentReplicas: st.CurrentReplicas, DesiredReplicas: st.DesiredReplicas}
	current := make([]autoscalingv1.MetricStatus, 0, len(st.CurrentMetrics))
	for _, m := range st.CurrentMetrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Current.AverageUtilization != nil {
			u := *m.Resource.Current.AverageUtilization
			out.Status.CurrentCPUUtilizationPercentage = &u
		}
		current = append(current, metricStatusToV1(m))
	}
	conditions := make([]autoscalingv1.HorizontalPodAutoscalerCondition, 0, len(st.Conditions))
	for _, c := range st.Conditions {
		conditions = append(conditions, autoscalingv1.HorizontalPodAutoscalerCondition{Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type),
			Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	return annotate(&out.ObjectMeta.Annotations, map[string]any{hpaMetricSpecsAnnotation: other,
		hpaMetricStatusesAnnotation: current, hpaConditionsAnnotation: conditions})
}

// annotate stores each non-empty list as a JSON annotation.
func annotate(annotations *map[string]string, lists map[string]any) error {
	for key, list := range lists {
		data, err := json.Marshal(list)
		if err != nil {
			return err
		}
		if string(data) == "[]" || string(data) == "null" {
			continue
		}
		if *annotations == nil {
			*annotations = map[string]string{}
		}
		(*annotations)[key] = string(data)
	}
	return nil
}

func withoutRoundTripAnnotations(in map[string]string) map[string]string {
	_, a := in[hpaMetricSpecsAnnotation]
	_, b := in[hpaMetricStatusesAnnotation]
	_, c := in[hpaConditionsAnnotation]
	if !a && !b && !c {
		return in
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	delete(out, hpaMetricSpecsAnnotation)
	delete(out, hpaMetricStatusesAnnotation)
	delete(out, hpaConditionsAnnotation)
	return out
}

// convertHPAv1ToV2 writes in as out; a v1 object naming no metric at all
// gets the CPU utilization target v1 always implied (80%).
func convertHPAv1ToV2(in *autoscalingv1.HorizontalPodAutoscaler, out *autoscalingv2.HorizontalPodAutoscaler) error {
	*out = autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: *in.ObjectMeta.DeepCopy()}
	out.APIVersion, out.Kind = autoscalingv2.SchemeGroupVersion.String(), "HorizontalPodAutoscaler"
	ann := in.Annotations
	out.Annotations = withoutRoundTripAnnotations(out.Annotations)
	s := in.Spec
	out.Spec = autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: s.MinReplicas, MaxReplicas: s.MaxReplicas,
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(s.ScaleTargetRef)}
	var other []autoscalingv1.MetricSpec
	if err := fromAnnotation(ann, hpaMetricSpecsAnnotation, &other); err != nil {
		return err
	}
	for _, m := range other {
		out.Spec.Metrics = append(out.Spec.Metrics, metricSpecFromV1(m))
	}
	if p := s.TargetCPUUtilizationPercentage; p != nil {
		out.Spec.Metrics = append(out.Spec.Metrics, cpuUtilization(*p))
	}
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(hpaDefaultCPUUtilization)}
	}
	return statusFromV1(in, out)
}

func statusFromV1(in *autoscalingv1.HorizontalPodAutoscaler, out *autoscalingv2.HorizontalPodAutoscaler) error {
	st := in.Status
	out.Status = autoscalingv2.HorizontalPodAutoscalerStatus{ObservedGeneration: st.ObservedGeneration, LastScaleTime: st.LastScaleTime,
		CurrentReplicas: st.CurrentReplicas, DesiredReplicas: st.DesiredReplicas}
	if p := st.CurrentCPUUtilizationPercentage; p != nil {
		u := *p
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: &u}}}}
	}
	var current []autoscalingv1.MetricStatus
	if err := fromAnnotation(in.Annotations, hpaMetricStatusesAnnotation, &current); err != nil {
		return err
	}
	if _, ok := in.Annotations[hpaMetricStatusesAnnotation]; ok {
		out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, 0, len(current))
		for _, m := range current {
			out.Status.CurrentMetrics = append(out.Status.CurrentMetrics, metricStatusFromV1(m))
		}
	}
	var conditions []autoscalingv1.HorizontalPodAutoscalerCondition
	if err := fromAnnotation(in.Annotations, hpaConditionsAnnotation, &conditions); err != nil {
		return err
	}
	for _, c := range conditions {
		out.Status.Conditions = append(out.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type),
			Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	return nil
}

func fromAnnotation(ann map[string]string, key string, into any) error {
	data, ok := ann[key]
	if !ok {
		return nil
	}
	return json.Unmarshal([]byte(data), into)
}

func cpuUtilization(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &percent}}}
}
