package hpa

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setCondition sets the condition of type on h (added when missing), its
// transition time moved only when its status changes; message is a
// format of args.
func setCondition(h *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason, message string, args ...any) {
	var cond *autoscalingv2.HorizontalPodAutoscalerCondition
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == typ {
			cond = &h.Status.Conditions[i]
			break
		}
	}
	if cond == nil {
		h.Status.Conditions = append(h.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{Type: typ})
		cond = &h.Status.Conditions[len(h.Status.Conditions)-1]
	}
	if cond.Status != status {
		cond.LastTransitionTime = metav1.Now()
	}
	cond.Status = status
	cond.Reason = reason
	cond.Message = fmt.Sprintf(message, args...)
}

// conditionTrue reports h's condition of type present and True.
func conditionTrue(h *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType) bool {
	for _, c := range h.Status.Conditions {
		if c.Type == typ {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// hasObjectOrExternalMetric reports a metric that can scale from zero.
func hasObjectOrExternalMetric(h *autoscalingv2.HorizontalPodAutoscaler) bool {
	for _, m := range h.Spec.Metrics {
		if m.Type == autoscalingv2.ObjectMetricSourceType || m.Type == autoscalingv2.ExternalMetricSourceType {
			return true
		}
	}
	return false
}
