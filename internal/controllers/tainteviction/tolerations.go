package tainteviction

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// noExecuteTaints are the taints of effect NoExecute, in their order;
// never nil.
func noExecuteTaints(taints []corev1.Taint) []corev1.Taint {
	out := []corev1.Taint{}
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// matchTolerations matches each taint with the first toleration that
// tolerates it, returning those tolerations (one per taint, in the
// taints' order), or false when some taint is tolerated by none.
// compareOp lets operators Lt and Gt match (the
// TaintTolerationComparisonOperators gate).
func matchTolerations(taints []corev1.Taint, tolerations []corev1.Toleration, compareOp bool) ([]corev1.Toleration, bool) {
	matched := make([]corev1.Toleration, 0, len(taints))
	for i := range taints {
		j := firstTolerating(&taints[i], tolerations, compareOp)
		if j < 0 {
			return nil, false
		}
		matched = append(matched, tolerations[j])
	}
	return matched, true
}

func firstTolerating(taint *corev1.Taint, tolerations []corev1.Toleration, compareOp bool) int {
	for j := range tolerations {
		if tolerations[j].ToleratesTaint(klog.Background(), taint, compareOp) {
			return j
		}
	}
	return -1
}

// forever is how long a pod whose matched tolerations set no
// tolerationSeconds may stay.
const forever time.Duration = -1

// tolerationTime is how long a pod may stay on a node given the
// tolerations that matched its taints: the smallest tolerationSeconds
// among them, 0 when one is 0 or less or when there are none, and forever
// when none sets it.
func tolerationTime(matched []corev1.Toleration) time.Duration {
	if len(matched) == 0 {
		return 0
	}
	var least *int64
	for _, t := range matched {
		if t.TolerationSeconds == nil {
			continue
		}
		if *t.TolerationSeconds <= 0 {
			return 0
		}
		if least == nil || *t.TolerationSeconds < *least {
			least = t.TolerationSeconds
		}
	}
	if least == nil {
		return forever
	}
	// in seconds first, as upstream: a huge value overflows as there
	return time.Duration(*least) * time.Second
}
