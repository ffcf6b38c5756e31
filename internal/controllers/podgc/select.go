package podgc

import (
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// The DisruptionTarget condition of a pod deleted as an orphan.
const (
	ReasonDeletionByPodGC = "DeletionByPodGC"
	orphanMessage         = "PodGC: node no longer exists"
	// evictedReason is the kubelet's status.reason of a pod it evicted.
	evictedReason = "Evicted"
)

// terminated: neither Pending, Running nor Unknown.
func terminated(p *corev1.Pod) bool {
	switch p.Status.Phase {
	case corev1.PodPending, corev1.PodRunning, corev1.PodUnknown:
		return false
	}
	return true
}

func evicted(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && p.Status.Reason == evictedReason
}

// EvictedThenOldest orders pods as the collector deletes them: evicted
// ones first, then by creation time, then by name.
func EvictedThenOldest(a, b *corev1.Pod) int {
	if ea, eb := evicted(a), evicted(b); ea != eb {
		if ea {
			return -1
		}
		return 1
	}
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	switch {
	case a.Name < b.Name:
		return -1
	case a.Name > b.Name:
		return 1
	}
	return 0
}

// TerminatedOverThreshold returns the terminated pods beyond threshold,
// in the order they go (EvictedThenOldest).
func TerminatedOverThreshold(pods []*corev1.Pod, threshold int) []*corev1.Pod {
	var done []*corev1.Pod
	for _, p := range pods {
		if terminated(p) {
			done = append(done, p)
		}
	}
	if len(done) <= threshold {
		return nil
	}
	slices.SortFunc(done, EvictedThenOldest)
	return done[:len(done)-threshold]
}

// TerminatingOnOutOfServiceNodes returns the pods being deleted whose node
// is listed, not Ready and tainted node.kubernetes.io/out-of-service, in
// the order they go.
func TerminatingOnOutOfServiceNodes(pods []*corev1.Pod, nodes map[string]*corev1.Node) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			continue
		}
		if n := nodes[p.Spec.NodeName]; n != nil && !nodeReady(n) && hasTaint(n, corev1.TaintNodeOutOfService) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, EvictedThenOldest)
	return out
}

// UnscheduledTerminating returns the pods being deleted that are bound to
// no node.
func UnscheduledTerminating(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Spec.NodeName == "" {
			out = append(out, p)
		}
	}
	return out
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasTaint(n *corev1.Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
}

// orphanCondition is the DisruptionTarget condition of a pod whose node is
// gone.
func orphanCondition(p *corev1.Pod) *corev1.PodCondition {
	return &corev1.PodCondition{Type: corev1.DisruptionTarget, ObservedGeneration: p.Generation,
		Status: corev1.ConditionTrue, Reason: ReasonDeletionByPodGC, Message: orphanMessage}
}

// FailedStatus is the pod's status in phase Failed, observed at its
// generation, with cond (when given) set as the kubelet sets conditions:
// its transition time is now unless a condition of its type already had
// its status.
func FailedStatus(p *corev1.Pod, cond *corev1.PodCondition, now metav1.Time) corev1.PodStatus {
	s := *p.Status.DeepCopy()
	s.Phase = corev1.PodFailed
	s.ObservedGeneration = p.Generation
	if cond == nil {
		return s
	}
	c := *cond
	c.LastTransitionTime = now
	i := slices.IndexFunc(s.Conditions, func(old corev1.PodCondition) bool { return old.Type == c.Type })
	if i < 0 {
		s.Conditions = append(s.Conditions, c)
		return s
	}
	if s.Conditions[i].Status == c.Status {
		c.LastTransitionTime = s.Conditions[i].LastTransitionTime
	}
	s.Conditions[i] = c
	return s
}

// StatusPatch is the strategic merge patch from the pod's status to
// status, with the pod's uid as a precondition.
func StatusPatch(p *corev1.Pod, status corev1.PodStatus) ([]byte, error) {
	before, err := json.Marshal(corev1.Pod{Status: p.Status})
	if err != nil {
		return nil, err
	}
	after, err := json.Marshal(corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: p.UID}, Status: status})
	if err != nil {
		return nil, err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(before, after, corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("the status patch of pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return patch, nil
}
