package statefulset

import (
	"context"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

func readyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func isPodReady(p *corev1.Pod) bool {
	c := readyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

// isPodAvailable: ready for at least minReadySeconds at now.
func isPodAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	if !isPodReady(p) {
		return false
	}
	c := readyCondition(p)
	return minReadySeconds == 0 ||
		(!c.LastTransitionTime.IsZero() && !c.LastTransitionTime.Add(time.Duration(minReadySeconds)*time.Second).After(now))
}

func isRunningAndReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && isPodReady(p)
}

// isCreated: the pod exists on the server (a pod made locally has no
// phase yet).
func isCreated(p *corev1.Pod) bool { return p.Status.Phase != "" }

func isPending(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodPending }

func isTerminalPhase(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded
}

// isUnavailable: not available, or being deleted.
func isUnavailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	return !isPodAvailable(p, minReadySeconds, now) || p.DeletionTimestamp != nil
}

// countReplicas sets the status's counts from the pods: created ones
// (replicas), Running and Ready (ready), of those available
// (available), and created, not terminating ones of the current and the
// update revision.
func countReplicas(status *appsv1.StatefulSetStatus, minReadySeconds int32, current, update string, now time.Time, lists ...[]*corev1.Pod) {
	status.Replicas, status.ReadyReplicas, status.AvailableReplicas = 0, 0, 0
	status.CurrentReplicas, status.UpdatedReplicas = 0, 0
	for _, pods := range lists {
		for _, p := range pods {
			if isCreated(p) {
				status.Replicas++
			}
			if isRunningAndReady(p) {
				status.ReadyReplicas++
				if isPodAvailable(p, minReadySeconds, now) {
					status.AvailableReplicas++
				}
			}
			if isCreated(p) && p.DeletionTimestamp == nil {
				switch rev := podRevision(p); {
				case rev == current && rev == update:
					status.CurrentReplicas++
					status.UpdatedReplicas++
				case rev == current:
					status.CurrentReplicas++
				case rev == update:
					status.UpdatedReplicas++
				}
			}
		}
	}
}

// completeUpdate: once every replica is of the update revision and ready,
// the update revision becomes the current one.
func completeUpdate(set *appsv1.StatefulSet, status *appsv1.StatefulSetStatus) {
	want := replicasOf(set)
	if status.UpdatedReplicas == want && status.ReadyReplicas == want && status.Replicas == want {
		status.CurrentReplicas = status.UpdatedReplicas
		status.CurrentRevision = status.UpdateRevision
	}
}

// statusChanged: the new status differs from the set's in what the
// controller keeps (or observes a newer generation).
func statusChanged(set *appsv1.StatefulSet, s *appsv1.StatefulSetStatus) bool {
	old := set.Status
	return s.ObservedGeneration > old.ObservedGeneration || s.Replicas != old.Replicas ||
		s.CurrentReplicas != old.CurrentReplicas || s.ReadyReplicas != old.ReadyReplicas ||
		s.UpdatedReplicas != old.UpdatedReplicas || s.CurrentRevision != old.CurrentRevision ||
		s.AvailableReplicas != old.AvailableReplicas || s.UpdateRevision != old.UpdateRevision ||
		!reflect.DeepEqual(old.Conditions, s.Conditions)
}

// writeStatus completes an update that is done and writes the status if it
// changed, retrying conflicts on the cached set.
func (c *Controller) writeStatus(ctx context.Context, set *appsv1.StatefulSet, status *appsv1.StatefulSetStatus) error {
	completeUpdate(set, status)
	if !statusChanged(set, status) {
		return nil
	}
	set = set.DeepCopy()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		set.Status = *status
		updated, err := c.client.AppsV1().StatefulSets(set.Namespace).UpdateStatus(ctx, set, metav1.UpdateOptions{})
		if err == nil {
			c.wrote(updated, setsResource, updated.ResourceVersion)
			return nil
		}
		if cached, ok := c.sets.Get(set.Namespace, set.Name); ok {
			set = cached.DeepCopy()
		}
		return err
	})
}

// nextAvailabilityCheck is when the next ready pod becomes available.
func nextAvailabilityCheck(pods []*corev1.Pod, minReadySeconds int32, now time.Time) *time.Duration {
	var next *time.Duration
	for _, p := range pods {
		c := readyCondition(p)
		if !isPodReady(p) || minReadySeconds <= 0 || c.LastTransitionTime.IsZero() {
			continue
		}
		d := c.LastTransitionTime.Add(time.Duration(minReadySeconds) * time.Second).Sub(now)
		if d > 0 && (next == nil || d < *next) {
			next = &d
		}
	}
	return next
}
