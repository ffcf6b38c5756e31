package disruption

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// staleDisruptionCondition reports whether the pod has a True
// DisruptionTarget condition that will be stale (the pod is not being
// deleted, is not terminal, and the condition is not the kubelet's), and
// how long until it is.
func (c *Controller) staleDisruptionCondition(pod *corev1.Pod) (bool, time.Duration) {
	if pod.DeletionTimestamp != nil {
		return false, 0
	}
	cond := podCondition(pod, corev1.DisruptionTarget)
	if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason == corev1.PodReasonTerminationByKubelet ||
		pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return false, 0
	}
	return true, max(c.staleTimeout-c.clock.Since(cond.LastTransitionTime.Time), 0)
}

// resetStaleDisruption sets the pod's DisruptionTarget condition to False
// (without reason or message, as upstream) once it is stale; one that
// will be is queued again for then.
func (c *Controller) resetStaleDisruption(ctx context.Context, k string) error {
	ns, name, _ := strings.Cut(k, "/")
	pod, ok := c.pods.Get(ns, name)
	if !ok {
		return nil
	}
	stale, after := c.staleDisruptionCondition(pod)
	if !stale {
		return nil
	}
	if after > 0 {
		c.stalePods.AddAfter(k, after)
		return nil
	}
	next := pod.DeepCopy()
	if !setPodCondition(&next.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionFalse,
		ObservedGeneration: next.Generation}, c.clock.Now()) {
		return nil
	}
	if _, err := c.client.CoreV1().Pods(ns).UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil {
		return err
	}
	c.log.Debug("reset a stale DisruptionTarget condition to False", "pod", k)
	return nil
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// setPodCondition puts cond into status as upstream's UpdatePodCondition
// does: its transition time is now if its status changed (or it is new),
// the old one's otherwise; it reports whether anything changed.
func setPodCondition(status *corev1.PodStatus, cond corev1.PodCondition, now time.Time) bool {
	cond.LastTransitionTime = metav1.NewTime(now)
	for i, old := range status.Conditions {
		if old.Type != cond.Type {
			continue
		}
		if cond.Status == old.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
		same := cond.Status == old.Status && cond.Reason == old.Reason && cond.Message == old.Message &&
			cond.LastProbeTime.Equal(&old.LastProbeTime) && cond.LastTransitionTime.Equal(&old.LastTransitionTime)
		status.Conditions[i] = cond
		return !same
	}
	status.Conditions = append(status.Conditions, cond)
	return true
}
