package hpa

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// Without the custom and external metrics APIs, pods and external metrics
// fail as upstream's clients make them: no custom metrics group in
// discovery, the external metric's 404.
func TestCustomAndExternalMetricsNotServed(t *testing.T) {
	e := start(t)
	e.createDeployment("web", 2)
	e.createDeployment("queue", 2)
	e.createAutoscaler(autoscaler("web", "web", nil, 4, func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "requests"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))}}}}
	}))
	e.createAutoscaler(autoscaler("queue", "queue", nil, 4, func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "queue_length"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(resource.MustParse("30"))}}}}
	}))
	podsErr := "unable to get metric requests: unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"
	e.waitEvent("web", corev1.EventTypeWarning, "FailedGetPodsMetric", podsErr)
	e.waitEvent("web", corev1.EventTypeWarning, "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get pods metric value: "+podsErr)
	e.waitConditions("web", []cond{
		{autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale"},
		{autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetPodsMetric", "the HPA was unable to compute the replica count: " + podsErr},
	}, nil)
	externalErr := "unable to get external metric default/queue_length/nil: unable to fetch metrics from external metrics API: the server could not find the requested resource (get queue_length.external.metrics.k8s.io)"
	e.waitEvent("queue", corev1.EventTypeWarning, "FailedGetExternalMetric", externalErr)
	e.waitEvent("queue", corev1.EventTypeWarning, "FailedComputeMetricsReplicas",
		"invalid metrics (1 invalid out of 1), first error is: failed to get queue_length external metric value: failed to get external metric queue_length: "+externalErr)
	e.waitConditions("queue", []cond{
		{autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale"},
		{autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetExternalMetric", "the HPA was unable to compute the replica count: " + externalErr},
	}, nil)
}

// The controller's families: the autoscalers it follows, their desired
// replicas, and reconciliations by action and error.
func TestMetricsFamilies(t *testing.T) {
	e := start(t)
	e.createDeployment("web", 5)
	e.createAutoscaler(autoscaler("web", "web", ptr.To[int32](1), 3))
	e.waitReplicas("web", 3)
	e.waitMetrics(`
# HELP horizontal_pod_autoscaler_controller_num_horizontal_pod_autoscalers [ALPHA] Current number of controlled HPA objects.
# TYPE horizontal_pod_autoscaler_controller_num_horizontal_pod_autoscalers gauge
horizontal_pod_autoscaler_controller_num_horizontal_pod_autoscalers 1
# HELP horizontal_pod_autoscaler_controller_desired_replicas [ALPHA] Current desired replica count for HPA objects.
# TYPE horizontal_pod_autoscaler_controller_desired_replicas gauge
horizontal_pod_autoscaler_controller_desired_replicas{hpa_name="web",namespace="default"} 3
`, "horizontal_pod_autoscaler_controller_num_horizontal_pod_autoscalers", "horizontal_pod_autoscaler_controller_desired_replicas")
	e.waitCounter(`horizontal_pod_autoscaler_controller_reconciliations_total{action="scale_down",error="none"}`, 1)
	e.waitCounterAtLeast(`horizontal_pod_autoscaler_controller_reconciliations_total{action="none",error="internal"}`, 1)
	e.waitCounterAtLeast(`horizontal_pod_autoscaler_controller_metric_computation_total{action="none",error="internal",metric_type="Resource"}`, 1)
}
