package job

import (
	"slices"
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

func hasTrackingFinalizer(p *corev1.Pod) bool {
	return slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer)
}

func isTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// isActive: neither finished nor being deleted.
func isActive(p *corev1.Pod) bool { return !isTerminal(p) && p.DeletionTimestamp == nil }

// isTerminating: being deleted and not finished.
func isTerminating(p *corev1.Pod) bool { return !isTerminal(p) && p.DeletionTimestamp != nil }

func activePods(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if isActive(p) {
			out = append(out, p)
		}
	}
	return out
}

func terminatingPods(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if isTerminating(p) {
			out = append(out, p)
		}
	}
	return out
}

func readyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func isReady(p *corev1.Pod) bool {
	c := readyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

func countReady(pods []*corev1.Pod) int32 {
	n := int32(0)
	for _, p := range pods {
		if isReady(p) {
			n++
		}
	}
	return n
}

// onlyReplaceFailedPods: podReplacementPolicy Failed, a terminating pod is
// replaced only once it has failed.
func onlyReplaceFailedPods(j *batchv1.Job) bool {
	return j.Spec.PodReplacementPolicy != nil && *j.Spec.PodReplacementPolicy == batchv1.Failed
}

// isPodFailed: Failed, or (unless only failed pods are replaced) being
// deleted without having succeeded.
func isPodFailed(p *corev1.Pod, j *batchv1.Job) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	if onlyReplaceFailedPods(j) {
		return false
	}
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded
}

var phaseOrdinal = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

// activePodsLess orders pods the least useful first (upstream's
// controller.ActivePods): unscheduled, then pending < unknown < running,
// not ready, ready more recently, restarted more, created more recently.
func activePodsLess(a, b *corev1.Pod) bool {
	if a.Spec.NodeName != b.Spec.NodeName && (a.Spec.NodeName == "" || b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	if phaseOrdinal[a.Status.Phase] != phaseOrdinal[b.Status.Phase] {
		return phaseOrdinal[a.Status.Phase] < phaseOrdinal[b.Status.Phase]
	}
	if isReady(a) != isReady(b) {
		return !isReady(a)
	}
	if isReady(a) && isReady(b) {
		ta, tb := readyTime(a), readyTime(b)
		if !ta.Equal(tb) {
			return afterOrZero(ta, tb)
		}
	}
	ra, sa := maxRestarts(a)
	rb, sb := maxRestarts(b)
	if ra != rb {
		return ra > rb
	}
	if sa != sb {
		return sa > sb
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return afterOrZero(&a.CreationTimestamp, &b.CreationTimestamp)
	}
	return false
}

func sortActivePods(pods []*corev1.Pod) {
	sort.Sort(byActivity(pods))
}

type byActivity []*corev1.Pod

func (s byActivity) Len() int           { return len(s) }
func (s byActivity) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s byActivity) Less(i, j int) bool { return activePodsLess(s[i], s[j]) }

func readyTime(p *corev1.Pod) *metav1.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return &c.LastTransitionTime
		}
	}
	return &metav1.Time{}
}

func afterOrZero(t1, t2 *metav1.Time) bool {
	if t1.IsZero() || t2.IsZero() {
		return t1.IsZero()
	}
	return t1.After(t2.Time)
}

// maxRestarts are the highest restart counts of the pod's containers and
// of its sidecars.
func maxRestarts(p *corev1.Pod) (regular, sidecar int32) {
	for _, c := range p.Status.ContainerStatuses {
		regular = max(regular, c.RestartCount)
	}
	sidecars := sets.New[string]()
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.Insert(c.Name)
		}
	}
	for _, c := range p.Status.InitContainerStatuses {
		if sidecars.Has(c.Name) {
			sidecar = max(sidecar, c.RestartCount)
		}
	}
	return regular, sidecar
}

// activePodsForRemoval are the pods to delete: for an Indexed Job those
// of a repeated, missing or out-of-range index, and then, to reach
// atLeast, the least useful.
func activePodsForRemoval(j *batchv1.Job, pods []*corev1.Pod, atLeast int) []*corev1.Pod {
	var rm, left []*corev1.Pod
	if isIndexed(j) {
		rm, left = duplicateIndexPodsForRemoval(slices.Clone(pods), int(*j.Spec.Completions))
	} else {
		left = slices.Clone(pods)
	}
	if len(rm) < atLeast {
		sortActivePods(left)
		rm = append(rm, left[:atLeast-len(rm)]...)
	}
	return rm
}
