package replicaset

import (
	"math"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podDeletionCostAnnotation orders the pods a controller deletes first
// (lower cost first).
const podDeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// PodsToDelete chooses which diff of pods to delete on scale down,
// preferring pods in earlier phases of startup (upstream's
// getPodsToDelete): related are the active pods of every controller with
// the same owner, counted per node to rank doubled-up pods first.
func PodsToDelete(pods, related []*corev1.Pod, diff int, now time.Time) []*corev1.Pod {
	if diff < len(pods) {
		onNode := map[string]int{}
		for _, p := range related {
			if isPodActive(p) {
				onNode[p.Spec.NodeName]++
			}
		}
		ranked := rankedPods{pods: pods, rank: make([]int, len(pods)), now: metav1.NewTime(now)}
		for i, p := range pods {
			ranked.rank[i] = onNode[p.Spec.NodeName]
		}
		sort.Sort(ranked)
	}
	return pods[:diff]
}

// rankedPods sorts pods the most deletable first, by the rules of
// upstream's ActivePodsWithRanks, each applied when the previous ones tie:
// unassigned before assigned; Pending before Unknown before Running; not
// ready before ready; lower pod-deletion-cost first; more pods of the same
// owner on the node first; ready for less time first; more container
// restarts first; newer first. Times compare on a logarithmic scale of
// their age, ties broken by uid.
type rankedPods struct {
	pods []*corev1.Pod
	rank []int
	now  metav1.Time
}

func (s rankedPods) Len() int { return len(s.pods) }

func (s rankedPods) Swap(i, j int) {
	s.pods[i], s.pods[j] = s.pods[j], s.pods[i]
	s.rank[i], s.rank[j] = s.rank[j], s.rank[i]
}

var podPhaseOrdinal = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

func (s rankedPods) Less(i, j int) bool {
	a, b := s.pods[i], s.pods[j]
	if a.Spec.NodeName != b.Spec.NodeName && (a.Spec.NodeName == "" || b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	if podPhaseOrdinal[a.Status.Phase] != podPhaseOrdinal[b.Status.Phase] {
		return podPhaseOrdinal[a.Status.Phase] < podPhaseOrdinal[b.Status.Phase]
	}
	if isPodReady(a) != isPodReady(b) {
		return !isPodReady(a)
	}
	if ca, cb := deletionCost(a), deletionCost(b); ca != cb {
		return ca < cb
	}
	if s.rank[i] != s.rank[j] {
		return s.rank[i] > s.rank[j]
	}
	if isPodReady(a) && isPodReady(b) {
		ta, tb := podReadyTime(a), podReadyTime(b)
		if !ta.Equal(tb) {
			return s.newerFirst(ta, tb, a, b)
		}
	}
	if ra, rb := maxRestarts(a), maxRestarts(b); ra != rb {
		return ra[0] > rb[0] || (ra[0] == rb[0] && ra[1] > rb[1])
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return s.newerFirst(&a.CreationTimestamp, &b.CreationTimestamp, a, b)
	}
	return false
}

// newerFirst orders two different times, the later (or zero) first, on a
// logarithmic scale of their age when both are set.
func (s rankedPods) newerFirst(ta, tb *metav1.Time, a, b *corev1.Pod) bool {
	if s.now.IsZero() || ta.IsZero() || tb.IsZero() {
		return afterOrZero(ta, tb)
	}
	if d := logRank(*ta, s.now) - logRank(*tb, s.now); d != 0 {
		return d < 0
	}
	return a.UID < b.UID
}

// afterOrZero: t1 is after t2, a zero time being after any other.
func afterOrZero(t1, t2 *metav1.Time) bool {
	if t1.IsZero() || t2.IsZero() {
		return t1.IsZero()
	}
	return t1.After(t2.Time)
}

// logRank is the base-2 logarithm of t's age at now, -1 for no age.
func logRank(t, now metav1.Time) int64 {
	if d := now.Sub(t.Time); d > 0 {
		return int64(math.Log2(float64(d)))
	}
	return -1
}

// deletionCost is the pod's pod-deletion-cost annotation, 0 when unset or
// not an int32 written plainly (no "+", no leading zero).
func deletionCost(p *corev1.Pod) int32 {
	v := p.Annotations[podDeletionCostAnnotation]
	if v == "" || !(v[0] == '-' || v == "0" || (v[0] >= '1' && v[0] <= '9')) {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

// podReadyTime is when the pod last became ready (zero when not ready).
func podReadyTime(p *corev1.Pod) *metav1.Time {
	if c := readyCondition(p); c != nil && c.Status == corev1.ConditionTrue {
		return &c.LastTransitionTime
	}
	return &metav1.Time{}
}

// maxRestarts is the most restarts of a regular container, and of a
// sidecar (an init container restarted always).
func maxRestarts(p *corev1.Pod) [2]int32 {
	var out [2]int32
	for _, c := range p.Status.ContainerStatuses {
		out[0] = max(out[0], c.RestartCount)
	}
	sidecars := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
		}
	}
	for _, c := range p.Status.InitContainerStatuses {
		if sidecars[c.Name] {
			out[1] = max(out[1], c.RestartCount)
		}
	}
	return out
}
