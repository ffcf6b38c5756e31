package pvbinder

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

func claimKey(pvc *corev1.PersistentVolumeClaim) string { return pvc.Namespace + "/" + pvc.Name }

func claimRefKey(ref *corev1.ObjectReference) string { return ref.Namespace + "/" + ref.Name }

func splitKey(key string) (namespace, name string) {
	namespace, name, _ = strings.Cut(key, "/")
	return namespace, name
}

// podTerminated says whether pod no longer uses its volumes: it has
// finished, or it is being deleted and none of its containers runs
// (upstream's volume util IsPodTerminated).
func podTerminated(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return true
	}
	return pod.DeletionTimestamp != nil && notRunning(pod.Status.InitContainerStatuses) &&
		notRunning(pod.Status.ContainerStatuses) && notRunning(pod.Status.EphemeralContainerStatuses)
}

func notRunning(statuses []corev1.ContainerStatus) bool {
	for _, s := range statuses {
		if s.State.Terminated == nil && s.State.Waiting == nil {
			return false
		}
	}
	return true
}
