package replicaset

import (
	"context"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

func readyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// isPodReady: the pod's Ready condition is True.
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

// isPodActive: neither finished nor being deleted.
func isPodActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil
}

// isPodTerminating: being deleted and not finished.
func isPodTerminating(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp != nil
}

// calculateStatus is rs's status for its active pods (and terminating
// ones), with the ReplicaFailure condition set from the error managing its
// replicas returned, or removed when there was none.
func (c *Controller) calculateStatus(rs *appsv1.ReplicaSet, active, terminating []*corev1.Pod, manageErr error, now time.Time) appsv1.ReplicaSetStatus {
	status := *rs.Status.DeepCopy()
	template := labels.Set(rs.Spec.Template.Labels).AsSelectorPreValidated()
	var fullyLabeled, ready, available int32
	for _, p := range active {
		if template.Matches(labels.Set(p.Labels)) {
			fullyLabeled++
		}
		if isPodReady(p) {
			ready++
			if isPodAvailable(p, rs.Spec.MinReadySeconds, now) {
				available++
			}
		}
	}
	failure := condition(rs.Status, appsv1.ReplicaSetReplicaFailure)
	switch {
	case manageErr != nil && failure == nil:
		reason := ""
		if diff := len(active) - int(*rs.Spec.Replicas); diff < 0 {
			reason = reasonFailedCreate
		} else if diff > 0 {
			reason = reasonFailedDelete
		}
		status.Conditions = append(withoutCondition(status.Conditions, appsv1.ReplicaSetReplicaFailure), appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now),
			Reason: reason, Message: manageErr.Error()})
	case manageErr == nil && failure != nil:
		status.Conditions = withoutCondition(status.Conditions, appsv1.ReplicaSetReplicaFailure)
	}
	status.Replicas = int32(len(active))
	status.FullyLabeledReplicas = fullyLabeled
	status.ReadyReplicas = ready
	status.AvailableReplicas = available
	status.TerminatingReplicas = nil
	if c.kind.terminatingReplicas {
		status.TerminatingReplicas = ptr.To(int32(len(terminating)))
	}
	return status
}

func condition(status appsv1.ReplicaSetStatus, t appsv1.ReplicaSetConditionType) *appsv1.ReplicaSetCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}

func withoutCondition(conds []appsv1.ReplicaSetCondition, t appsv1.ReplicaSetConditionType) []appsv1.ReplicaSetCondition {
	var out []appsv1.ReplicaSetCondition
	for _, c := range conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}

// updateStatus writes status to rs unless it already has it (and has
// observed its generation); a failed update is retried once on the version
// read back from the server.
func (c *Controller) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet, status appsv1.ReplicaSetStatus) (*appsv1.ReplicaSet, error) {
	if rs.Status.Replicas == status.Replicas && rs.Status.FullyLabeledReplicas == status.FullyLabeledReplicas &&
		rs.Status.ReadyReplicas == status.ReadyReplicas && rs.Status.AvailableReplicas == status.AvailableReplicas &&
		ptr.Equal(rs.Status.TerminatingReplicas, status.TerminatingReplicas) &&
		rs.Generation == rs.Status.ObservedGeneration && reflect.DeepEqual(rs.Status.Conditions, status.Conditions) {
		return rs, nil
	}
	status.ObservedGeneration = rs.Generation
	for attempt := 0; ; attempt++ {
		rs.Status = status
		updated, err := c.kind.updateStatus(ctx, c.client, rs)
		if err == nil {
			return updated, nil
		}
		if attempt >= 1 {
			return nil, err
		}
		if rs, err = c.kind.get(ctx, c.client, rs.Namespace, rs.Name); err != nil {
			return nil, err
		}
	}
}

// nextAvailabilityCheck is when the next of the ready pods becomes
// available (minReadySeconds after it became ready), if one does.
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
