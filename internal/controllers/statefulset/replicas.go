package statefulset

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// processReplica handles the pod of one ordinal in range: a finished pod
// is deleted (to be created again), a missing one created, a pending
// one's missing claims created; when monotonic, it stops (true) at a pod
// not yet Running, Ready and Available or still terminating; a pod whose
// identity, storage or claims' owners are off is updated.
func (c *Controller) processReplica(ctx context.Context, set, updateSet *appsv1.StatefulSet, monotonic bool, pod *corev1.Pod, now time.Time) (bool, error) {
	if isTerminalPhase(pod) {
		if pod.DeletionTimestamp == nil {
			if err := c.deletePod(ctx, set, pod); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	if !isCreated(pod) {
		stale, err := c.claimIsStale(set, pod)
		if err != nil || stale {
			return true, err
		}
		if err := c.createPod(ctx, set, pod); err != nil {
			return true, err
		}
		if monotonic {
			return true, nil
		}
	}
	if isPending(pod) {
		if err := c.createMissingClaims(ctx, set, pod); err != nil {
			return true, err
		}
	}
	if monotonic && (pod.DeletionTimestamp != nil || !isRunningAndReady(pod) ||
		!isPodAvailable(pod, set.Spec.MinReadySeconds, now)) {
		return true, nil
	}
	retentionMatch, err := c.claimsMatchRetentionPolicy(updateSet, pod)
	if err != nil {
		retentionMatch = true
	}
	if identityMatches(set, pod) && storageMatches(set, pod) && retentionMatch {
		return false, nil
	}
	return false, c.updatePod(ctx, updateSet, pod.DeepCopy())
}

// fixCondemnedClaims gives the claims of a pod outside the range the
// owners the retention policy wants for a scaled-down pod.
func (c *Controller) fixCondemnedClaims(ctx context.Context, updateSet *appsv1.StatefulSet, pod *corev1.Pod) (bool, error) {
	match, err := c.claimsMatchRetentionPolicy(updateSet, pod)
	if err != nil {
		return true, err
	}
	if !match {
		if err := c.updateClaimsForRetentionPolicy(ctx, updateSet, pod); err != nil {
			return true, err
		}
	}
	return false, nil
}

// processCondemned deletes a pod outside the range; when monotonic, only
// once the pods before it are gone and it is healthy or the first
// unhealthy pod (so one broken pod does not block a scale down).
func (c *Controller) processCondemned(ctx context.Context, set *appsv1.StatefulSet, firstUnhealthy *corev1.Pod, monotonic bool, pod *corev1.Pod, now time.Time) (bool, error) {
	if pod.DeletionTimestamp != nil {
		return monotonic, nil
	}
	if monotonic && pod != firstUnhealthy &&
		(!isRunningAndReady(pod) || !isPodAvailable(pod, set.Spec.MinReadySeconds, now)) {
		return true, nil
	}
	return true, c.deletePod(ctx, set, pod)
}

// rollingUpdate deletes pods of an older revision, highest ordinal first
// down to the partition, as many at once as maxUnavailable allows
// counting the unavailable ones (with Parallel management, unavailable
// pods of an older revision are deleted regardless).
func (c *Controller) rollingUpdate(ctx context.Context, set *appsv1.StatefulSet, replicas []*corev1.Pod, updateRevision string, status *appsv1.StatefulSetStatus, now time.Time) error {
	minReady := set.Spec.MinReadySeconds
	partition, maxUnavailable := 0, 1
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if ru.Partition != nil {
			partition = int(*ru.Partition)
		}
		var err error
		if maxUnavailable, err = MaxUnavailable(ru.MaxUnavailable, len(replicas)); err != nil {
			return err
		}
	}
	parallel := set.Spec.PodManagementPolicy == appsv1.ParallelPodManagement
	unavailable, unavailableOld := 0, 0
	for _, p := range replicas {
		if isUnavailable(p, minReady, now) {
			unavailable++
			if parallel && podRevision(p) != updateRevision && p.DeletionTimestamp == nil {
				unavailableOld++
			}
		}
	}
	if unavailable >= maxUnavailable && unavailableOld == 0 {
		return nil
	}
	budget := maxUnavailable - unavailable
	for target := len(replicas) - 1; target >= partition; target-- {
		p := replicas[target]
		if podRevision(p) == updateRevision || p.DeletionTimestamp != nil {
			continue
		}
		switch {
		case parallel && !isPodAvailable(p, minReady, now):
		case budget > 0:
			budget--
		default:
			continue
		}
		if err := c.deletePod(ctx, set, p); err != nil {
			return err
		}
		status.CurrentReplicas--
	}
	return nil
}

// MaxUnavailable is how many of replicas pods may be unavailable in a
// rolling update: maxUnavailable (default 1), a percentage rounded down,
// at least 1.
func MaxUnavailable(maxUnavailable *intstr.IntOrString, replicas int) (int, error) {
	v := intstr.FromInt32(1)
	if maxUnavailable != nil {
		v = *maxUnavailable
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, replicas, false)
	if err != nil {
		return 0, err
	}
	return max(n, 1), nil
}
