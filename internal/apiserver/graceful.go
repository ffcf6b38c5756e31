package apiserver

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// gracefulPodDelete is upstream's rest.BeforeDelete with the pod strategy's
// CheckGracefulDelete, for a pod being deleted when Config.GracefulPodDeletion
// is on: a bound pod that has not finished gets a deletionTimestamp its
// grace period away (the request's, else its terminationGracePeriodSeconds)
// and stays until its kubelet deletes it with a grace period of 0; a
// second delete may only shorten the period (pending reports one that does
// not, which changes nothing). graceful reports that obj was marked; its
// deletionGracePeriodSeconds of 0 means delete it now.
func gracefulPodDelete(obj runtime.Object, opts *metav1.DeleteOptions, now time.Time) (graceful, pending bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false, false
	}
	if g := opts.GracePeriodSeconds; g != nil && *g < 0 {
		opts.GracePeriodSeconds = ptrTo(int64(1))
	}
	if g := pod.DeletionGracePeriodSeconds; g != nil && *g < 0 {
		pod.DeletionGracePeriodSeconds = ptrTo(int64(1))
	}
	if pod.DeletionTimestamp != nil {
		return shortenGrace(pod, opts, now)
	}
	period := int64(0)
	if opts.GracePeriodSeconds != nil {
		period = *opts.GracePeriodSeconds
	} else if pod.Spec.TerminationGracePeriodSeconds != nil {
		period = *pod.Spec.TerminationGracePeriodSeconds
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	opts.GracePeriodSeconds = &period
	at := metav1.NewTime(now.Add(time.Duration(period) * time.Second))
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &at, &period
	if pod.Generation > 0 {
		pod.Generation++
	}
	return true, false
}

// shortenGrace handles the delete of a pod already being deleted
// gracefully: a shorter grace period moves its deletionTimestamp earlier
// (not before now); anything else leaves it pending.
func shortenGrace(pod *corev1.Pod, opts *metav1.DeleteOptions, now time.Time) (graceful, pending bool) {
	current := pod.DeletionGracePeriodSeconds
	if current == nil || *current == 0 {
		return false, false
	}
	if opts.GracePeriodSeconds == nil {
		opts.GracePeriodSeconds = current
		return false, true
	}
	period := *opts.GracePeriodSeconds
	if period >= *current {
		return false, true
	}
	at := metav1.NewTime(pod.DeletionTimestamp.Add(-time.Duration(*current) * time.Second).Add(time.Duration(period) * time.Second))
	if at.Before(&metav1.Time{Time: now}) {
		at = metav1.NewTime(now)
		if period != 0 {
			period = 1
		}
	}
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &at, &period
	return true, false
}

// gracePending reports whether m is being deleted with a grace period
// other than 0: an update must not complete its deletion.
func gracePending(m metav1.Object) bool {
	g := m.GetDeletionGracePeriodSeconds()
	return m.GetDeletionTimestamp() != nil && g != nil && *g != 0
}

func ptrTo[T any](v T) *T { return &v }
