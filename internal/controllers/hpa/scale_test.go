package hpa

import (
	"fmt"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// createReadyPod creates a running, ready pod of the Deployment's labels
// requesting cpu, started long enough ago for its CPU to count.
func (e *env) createReadyPod(name, cpu string) {
	e.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: appLabels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	created, err := e.admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	longAgo := metav1.NewTime(time.Now().Add(-10 * time.Minute).Truncate(time.Second))
	created.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &longAgo,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: longAgo}}}
	if _, err := e.admin.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func usage(pod, cpu string) podMetrics {
	return podMetrics{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns, Labels: appLabels}, Timestamp: metav1.Now(),
		Window:     metav1.Duration{Duration: 30 * time.Second},
		Containers: []containerMetrics{{Name: "c", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}
}

// With a resource metrics API served, a Deployment whose pods use 4 times
// their target is scaled up at most to double (without behavior), then
// to maxReplicas; the status reports the utilization.
func TestResourceMetricScalesUp(t *testing.T) {
	s := newEnv(t)
	fake := &fakeMetrics{next: s.server.Loopback(User)}
	fake.set(usage("web-1", "200m"), usage("web-2", "200m"))
	s.run(Config{Transport: fake})
	s.createDeployment("web", 2)
	s.createReadyPod("web-1", "100m")
	s.createReadyPod("web-2", "100m")
	s.createAutoscaler(autoscaler("web", "web", ptr.To[int32](1), 6, func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](50)
	}))
	s.waitEvent("web", corev1.EventTypeNormal, "SuccessfulRescale", "New size: 4; reason: cpu resource utilization (percentage of request) above target")
	s.waitReplicas("web", 6)
	s.waitEvent("web", corev1.EventTypeNormal, "SuccessfulRescale", "New size: 6; reason: cpu resource utilization (percentage of request) above target")
	h := s.waitConditions("web", []cond{
		{autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size"},
		{autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"},
		{autoscalingv2.ScalingLimited, corev1.ConditionTrue, "TooManyReplicas", "the desired replica count is more than the maximum replica count"},
		{autoscalingv2.ScaledToZero, corev1.ConditionFalse, "NotScaledToZero", "the HPA controller did not scale the workload to zero"},
	}, func(st autoscalingv2.HorizontalPodAutoscalerStatus) (bool, string) {
		return st.CurrentReplicas == 6 && st.DesiredReplicas == 6, fmt.Sprintf("current %d desired %d", st.CurrentReplicas, st.DesiredReplicas)
	})
	m := h.Status.CurrentMetrics
	if len(m) != 1 || m[0].Resource == nil || ptr.Deref(m[0].Resource.Current.AverageUtilization, 0) != 200 || m[0].Resource.Current.AverageValue.String() != "200m" {
		t.Fatalf("current metrics %+v: want cpu at 200%% (200m)", m)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if got := fake.asked[0]; got != "app=web" {
		t.Errorf("metrics asked with selector %q, want the scale's app=web", got)
	}
}

// The pods' usage below target scales down only after the downscale
// stabilization window; until then the condition says why.
func TestScaleDownWaitsForTheStabilizationWindow(t *testing.T) {
	s := newEnv(t)
	fake := &fakeMetrics{next: s.server.Loopback(User)}
	fake.set(usage("web-1", "10m"), usage("web-2", "10m"))
	s.run(Config{Transport: fake, DownscaleStabilization: time.Second})
	s.createDeployment("web", 4)
	s.createReadyPod("web-1", "100m")
	s.createReadyPod("web-2", "100m")
	s.createAutoscaler(autoscaler("web", "web", ptr.To[int32](1), 6))
	s.waitConditions("web", []cond{
		{autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"},
		{autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"},
		{autoscalingv2.ScalingLimited, corev1.ConditionFalse, "DesiredWithinRange", "the desired count is within the acceptable range"},
	}, nil)
	s.waitReplicas("web", 1)
	s.waitEvent("web", corev1.EventTypeNormal, "SuccessfulRescale", "New size: 1; reason: All metrics below target")
}
