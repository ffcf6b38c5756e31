package hpa

import (
	"fmt"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// The message of a CPU metric when no resource metrics API is served, as
// client-go words kube-apiserver's plain 404.
const noMetricsAPI = "failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)"

// A target above maxReplicas is scaled to it without asking for metrics;
// at the next sync, within bounds, the missing metrics API is reported.
func TestAboveMaxScalesToMax(t *testing.T) {
	e := start(t)
	e.createDeployment("web", 5)
	e.createAutoscaler(autoscaler("web", "web", ptr.To[int32](1), 3))
	e.waitReplicas("web", 3)
	e.waitEvent("web", corev1.EventTypeNormal, "SuccessfulRescale", "New size: 3; reason: Current number of replicas above Spec.MaxReplicas")
	e.waitEvent("web", corev1.EventTypeWarning, "FailedGetResourceMetric", noMetricsAPI)
	e.waitEvent("web", corev1.EventTypeWarning, "FailedComputeMetricsReplicas",
		"invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: "+noMetricsAPI)
	h := e.waitConditions("web", []cond{
		{autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale"},
		{autoscalingv2.ScaledToZero, corev1.ConditionFalse, "NotScaledToZero", "the HPA controller did not scale the workload to zero"},
		{autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetResourceMetric", "the HPA was unable to compute the replica count: " + noMetricsAPI},
	}, func(s autoscalingv2.HorizontalPodAutoscalerStatus) (bool, string) {
		return s.CurrentReplicas == 3 && s.DesiredReplicas == 3 && s.LastScaleTime != nil && len(s.CurrentMetrics) == 1 && s.CurrentMetrics[0].Type == "",
			fmt.Sprintf("current %d desired %d last scale %v metrics %v", s.CurrentReplicas, s.DesiredReplicas, s.LastScaleTime, s.CurrentMetrics)
	})
	if h.Generation != 1 || h.Status.ObservedGeneration == nil || *h.Status.ObservedGeneration != 1 {
		t.Errorf("observedGeneration %v, generation %d: want both 1", h.Status.ObservedGeneration, h.Generation)
	}
	// A spec change is a new generation, reconciled at once.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h := e.getAutoscaler("web")
		h.Spec.MaxReplicas = 2
		_, err := e.admin.AutoscalingV2().HorizontalPodAutoscalers(ns).Update(ctx, h, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	e.waitReplicas("web", 2)
	e.waitConditions("web", []cond{
		{autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale"},
		{autoscalingv2.ScaledToZero, corev1.ConditionFalse, "NotScaledToZero", "the HPA controller did not scale the workload to zero"},
		{autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetResourceMetric", "the HPA was unable to compute the replica count: " + noMetricsAPI},
	}, func(s autoscalingv2.HorizontalPodAutoscalerStatus) (bool, string) {
		return ptr.Deref(s.ObservedGeneration, 0) == 2, fmt.Sprintf("observedGeneration %v", s.ObservedGeneration)
	})
}

// A target below minReplicas is scaled to it; the first status says so.
func TestBelowMinScalesToMin(t *testing.T) {
	e := start(t)
	e.createDeployment("web", 1)
	e.createAutoscaler(autoscaler("web", "web", ptr.To[int32](2), 4, func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Metrics = nil }))
	e.waitReplicas("web", 2)
	e.waitEvent("web", corev1.EventTypeNormal, "SuccessfulRescale", "New size: 2; reason: Current number of replicas below Spec.MinReplicas")
	e.waitConditions("web", []cond{
		{autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale"},
		{autoscalingv2.ScaledToZero, corev1.ConditionFalse, "NotScaledToZero", "the HPA controller did not scale the workload to zero"},
		{autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetResourceMetric", "the HPA was unable to compute the replica count: " + noMetricsAPI},
	}, nil)
}

// A target at zero replicas is left there: scaling is disabled, and no
// metric is asked for.
func TestZeroReplicasDisablesScaling(t *testing.T) {
	e := start(t)
	e.createDeployment("web", 0)
	e.createAutoscaler(autoscaler("web", "web", ptr.To[int32](2), 4))
	e.waitConditions("web", []cond{
		{autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale"},
		{autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero"},
	}, func(s autoscalingv2.HorizontalPodAutoscalerStatus) (bool, string) {
		return s.CurrentReplicas == 0 && s.DesiredReplicas == 0 && s.LastScaleTime == nil && s.ObservedGeneration != nil,
			fmt.Sprintf("current %d desired %d last scale %v", s.CurrentReplicas, s.DesiredReplicas, s.LastScaleTime)
	})
	if n := e.replicasOf("web"); n != 0 {
		t.Fatalf("replicas %d, want 0", n)
	}
}

// A target that does not exist, or of a kind nobody serves, fails with
// FailedGetScale.
func TestMissingTargetFailsToGetScale(t *testing.T) {
	e := start(t)
	e.createAutoscaler(autoscaler("gone", "gone", ptr.To[int32](1), 3))
	e.createAutoscaler(autoscaler("nokind", "x", ptr.To[int32](1), 3, func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Spec.ScaleTargetRef.APIVersion, h.Spec.ScaleTargetRef.Kind = "example.com/v1", "Widget"
	}))
	e.waitEvent("gone", corev1.EventTypeWarning, "FailedGetScale", `deployments.apps "gone" not found`)
	e.waitConditions("gone", []cond{{autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale",
		`the HPA controller was unable to get the target's current scale: deployments.apps "gone" not found`}}, nil)
	e.waitEvent("nokind", corev1.EventTypeWarning, "FailedGetScale", `no matches for kind "Widget" in group "example.com"`)
	h := e.waitConditions("nokind", []cond{{autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale",
		`the HPA controller was unable to get the target's current scale: no matches for kind "Widget" in group "example.com"`}}, nil)
	if h.Status.ObservedGeneration != nil || h.Status.CurrentReplicas != 0 {
		t.Errorf("status %+v: want only the condition", h.Status)
	}
}
