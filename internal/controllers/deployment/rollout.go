package deployment

import (
	"context"
	"fmt"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/controllers"
)

// rolloutRolling is one step of a rolling update: the new ReplicaSet
// scaled up within maxSurge, else the old ones down within
// maxUnavailable; a finished rollout cleans up old ReplicaSets.
func (c *Controller) rolloutRolling(ctx context.Context, d *appsv1.Deployment, rss []*appsv1.ReplicaSet) error {
	newRS, old, err := c.replicaSetsAndRevision(ctx, d, rss, true)
	if err != nil {
		return err
	}
	all := append(append([]*appsv1.ReplicaSet{}, old...), newRS)
	scaledUp, err := c.reconcileNewReplicaSet(ctx, all, newRS, d)
	if err != nil {
		return err
	}
	if scaledUp {
		return c.syncRolloutStatus(ctx, all, newRS, d)
	}
	if c.reconcileOldReplicaSets(ctx, all, activeReplicaSets(old), newRS, d) {
		return c.syncRolloutStatus(ctx, all, newRS, d)
	}
	if complete(d, &d.Status) {
		if err := c.cleanup(ctx, old, d); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, all, newRS, d)
}

func (c *Controller) reconcileNewReplicaSet(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	if *newRS.Spec.Replicas == *d.Spec.Replicas {
		return false, nil
	}
	if *newRS.Spec.Replicas > *d.Spec.Replicas {
		scaled, _, err := c.scaleReplicaSet(ctx, newRS, *d.Spec.Replicas, d, false)
		return scaled, err
	}
	replicas, err := newRSNewReplicas(d, all, newRS)
	if err != nil {
		return false, err
	}
	scaled, _, err := c.scaleReplicaSet(ctx, newRS, replicas, d, false)
	return scaled, err
}

// reconcileOldReplicaSets scales old ReplicaSets down as far as
// maxUnavailable allows: their unhealthy replicas first, then available
// ones, the oldest ReplicaSets first. Errors are swallowed, as upstream's:
// the next sync retries.
func (c *Controller) reconcileOldReplicaSets(ctx context.Context, all, old []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) bool {
	if sum(old, specReplicas) == 0 {
		return false
	}
	minAvailable := *d.Spec.Replicas - maxUnavailable(d)
	newUnavailable := *newRS.Spec.Replicas - newRS.Status.AvailableReplicas
	maxScaledDown := sum(all, specReplicas) - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false
	}
	old, cleaned, err := c.cleanupUnhealthyReplicas(ctx, old, d, maxScaledDown)
	if err != nil {
		return false
	}
	scaledDown, err := c.scaleDownOldForRollingUpdate(ctx, append(append([]*appsv1.ReplicaSet{}, old...), newRS), old, d)
	if err != nil {
		return false
	}
	return cleaned+scaledDown > 0
}

func (c *Controller) cleanupUnhealthyReplicas(ctx context.Context, old []*appsv1.ReplicaSet, d *appsv1.Deployment, maxCleanup int32) ([]*appsv1.ReplicaSet, int32, error) {
	byCreation(old)
	total := int32(0)
	for i, rs := range old {
		if total >= maxCleanup {
			break
		}
		if *rs.Spec.Replicas == 0 || *rs.Spec.Replicas == rs.Status.AvailableReplicas {
			continue
		}
		n := min(maxCleanup-total, *rs.Spec.Replicas-rs.Status.AvailableReplicas)
		newCount := *rs.Spec.Replicas - n
		if newCount > *rs.Spec.Replicas {
			return nil, 0, fmt.Errorf("when cleaning up unhealthy replicas, got invalid request to scale down %s/%s %d -> %d", rs.Namespace, rs.Name, *rs.Spec.Replicas, newCount)
		}
		_, updated, err := c.scaleReplicaSet(ctx, rs, newCount, d, false)
		if err != nil {
			return nil, total, err
		}
		total += n
		old[i] = updated
	}
	return old, total, nil
}

func (c *Controller) scaleDownOldForRollingUpdate(ctx context.Context, all, old []*appsv1.ReplicaSet, d *appsv1.Deployment) (int32, error) {
	minAvailable := *d.Spec.Replicas - maxUnavailable(d)
	available := sum(all, availableReplicas)
	if available <= minAvailable {
		return 0, nil
	}
	byCreation(old)
	total, target := int32(0), available-minAvailable
	for _, rs := range old {
		if total >= target {
			break
		}
		if *rs.Spec.Replicas == 0 {
			continue
		}
		n := min(*rs.Spec.Replicas, target-total)
		if _, _, err := c.scaleReplicaSet(ctx, rs, *rs.Spec.Replicas-n, d, false); err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// rolloutRecreate scales every old ReplicaSet to zero, waits for their
// pods to be gone, then creates (or scales up) the new one.
func (c *Controller) rolloutRecreate(ctx context.Context, d *appsv1.Deployment, rss []*appsv1.ReplicaSet) error {
	newRS, old, err := c.replicaSetsAndRevision(ctx, d, rss, false)
	if err != nil {
		return err
	}
	all := append(append([]*appsv1.ReplicaSet{}, old...), newRS)
	scaledDown := false
	for _, rs := range activeReplicaSets(old) {
		scaled, _, err := c.scaleReplicaSet(ctx, rs, 0, d, false)
		if err != nil {
			return err
		}
		scaledDown = scaledDown || scaled
	}
	if scaledDown || c.oldPodsRunning(newRS, old, rss) {
		return c.syncRolloutStatus(ctx, all, newRS, d)
	}
	if newRS == nil {
		if newRS, old, err = c.replicaSetsAndRevision(ctx, d, rss, true); err != nil {
			return err
		}
		all = append(append([]*appsv1.ReplicaSet{}, old...), newRS)
	}
	if _, _, err := c.scaleReplicaSet(ctx, newRS, *d.Spec.Replicas, d, false); err != nil {
		return err
	}
	if complete(d, &d.Status) {
		if err := c.cleanup(ctx, old, d); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, all, newRS, d)
}

// oldPodsRunning: an old ReplicaSet still counts replicas, or one of its
// pods has not finished.
func (c *Controller) oldPodsRunning(newRS *appsv1.ReplicaSet, old, rss []*appsv1.ReplicaSet) bool {
	if sum(old, statusReplicas) > 0 {
		return true
	}
	for _, rs := range rss {
		if newRS != nil && rs.UID == newRS.UID {
			continue
		}
		for _, p := range controllers.PodsOfController(c.pods, rs, "ReplicaSet", false) {
			if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
				return true
			}
		}
	}
	return false
}

// syncRolloutStatus writes the status with the Progressing condition
// (progressing, complete or timed out) and the ReplicaSets' failures; a
// Deployment whose status did not change is checked again at its progress
// deadline.
func (c *Controller) syncRolloutStatus(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	status := c.calculateStatus(all, newRS, d)
	if !hasProgressDeadline(d) {
		removeCondition(&status, appsv1.DeploymentProgressing)
	}
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	isComplete := status.Replicas == status.UpdatedReplicas && cur != nil && cur.Reason == reasonNewRSAvailable
	if hasProgressDeadline(d) && !isComplete {
		c.setProgressing(d, &status, newRS, cur)
	}
	if failures := replicaFailures(all, newRS); len(failures) > 0 {
		setCondition(&status, failures[0])
	} else {
		removeCondition(&status, appsv1.DeploymentReplicaFailure)
	}
	if reflect.DeepEqual(d.Status, status) {
		c.requeueStuck(d, status)
		return nil
	}
	d.Status = status
	_, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	return err
}

// setProgressing sets the Progressing condition as upstream words it.
func (c *Controller) setProgressing(d *appsv1.Deployment, status *appsv1.DeploymentStatus, newRS *appsv1.ReplicaSet, cur *appsv1.DeploymentCondition) {
	subject := func(what string) string {
		if newRS != nil {
			return fmt.Sprintf("ReplicaSet %q %s", newRS.Name, what)
		}
		return fmt.Sprintf("Deployment %q %s", d.Name, what)
	}
	now := c.now()
	switch {
	case complete(d, status):
		setCondition(status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, reasonNewRSAvailable, subject("has successfully progressed."), now))
	case progressing(d, status):
		cond := newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, reasonReplicaSetUpdated, subject("is progressing."), now)
		if cur != nil {
			if cur.Status == corev1.ConditionTrue {
				cond.LastTransitionTime = cur.LastTransitionTime
			}
			removeCondition(status, appsv1.DeploymentProgressing)
		}
		setCondition(status, cond)
	case timedOut(d, status, now):
		setCondition(status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, reasonTimedOut, subject("has timed out progressing."), now))
	}
}

// replicaFailures are the ReplicaFailure conditions of the new
// ReplicaSet, else of any, as Deployment conditions.
func replicaFailures(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) []appsv1.DeploymentCondition {
	collect := func(rss []*appsv1.ReplicaSet) []appsv1.DeploymentCondition {
		var out []appsv1.DeploymentCondition
		for _, rs := range rss {
			if rs == nil {
				continue
			}
			for _, c := range rs.Status.Conditions {
				if c.Type == appsv1.ReplicaSetReplicaFailure {
					out = append(out, appsv1.DeploymentCondition{Type: appsv1.DeploymentConditionType(c.Type), Status: c.Status,
						LastTransitionTime: c.LastTransitionTime, LastUpdateTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
				}
			}
		}
		return out
	}
	if out := collect([]*appsv1.ReplicaSet{newRS}); len(out) > 0 {
		return out
	}
	return collect(all)
}

// requeueStuck checks a rolling out Deployment again when its progress
// deadline passes.
func (c *Controller) requeueStuck(d *appsv1.Deployment, status appsv1.DeploymentStatus) {
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || cur == nil || complete(d, &status) || cur.Reason == reasonTimedOut {
		return
	}
	key := d.Namespace + "/" + d.Name
	after := cur.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(c.now())
	if after < time.Second {
		c.queue.AddRateLimited(key)
		return
	}
	c.queue.AddAfter(key, after+time.Second)
}
