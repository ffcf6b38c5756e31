// Package tolerations holds the toleration rules the pod-scheduling
// admission plugins share (PodTolerationRestriction, RuntimeClass,
// ExtendedResourceToleration): whether one toleration covers another,
// merging two lists, and checking a list against a whitelist, with
// upstream's semantics (pkg/util/tolerations of k8s.io/kubernetes).
//
// It is not a scheduler: it never matches tolerations against taints.
package tolerations

import (
	corev1 "k8s.io/api/core/v1"
)

// Equal reports whether a and b are the same toleration (tolerationSeconds
// compared by value).
func Equal(a, b corev1.Toleration) bool {
	if a.Key != b.Key || a.Operator != b.Operator || a.Value != b.Value || a.Effect != b.Effect {
		return false
	}
	if a.TolerationSeconds == nil || b.TolerationSeconds == nil {
		return a.TolerationSeconds == nil && b.TolerationSeconds == nil
	}
	return *a.TolerationSeconds == *b.TolerationSeconds
}

// Covers reports whether ss tolerates everything t tolerates.
func Covers(ss, t corev1.Toleration) bool {
	if Equal(ss, t) {
		return true
	}
	// An empty key with Exists matches every key.
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != corev1.TolerationOpExists) {
		return false
	}
	// An empty effect matches every effect.
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false
	}
	if ss.Effect == corev1.TaintEffectNoExecute && ss.TolerationSeconds != nil {
		if t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds {
			return false
		}
	}
	switch ss.Operator {
	case corev1.TolerationOpEqual, "": // empty means Equal
		return t.Operator == corev1.TolerationOpEqual && t.Value == ss.Value
	case corev1.TolerationOpExists:
		return true
	default: // Lt, Gt and unknown operators cover nothing else
		return false
	}
}

// Merge returns first followed by second without the tolerations another
// kept one covers; of equal tolerations the first is kept. It returns nil
// when both are empty. Neither input is modified.
func Merge(first, second []corev1.Toleration) []corev1.Toleration {
	all := make([]corev1.Toleration, 0, len(first)+len(second))
	all = append(append(all, first...), second...)
	var merged []corev1.Toleration
next:
	for i, t := range all {
		for _, kept := range merged {
			if Covers(kept, t) {
				continue next
			}
		}
		for _, later := range all[i+1:] {
			if !Equal(t, later) && Covers(later, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// Allowed reports whether every toleration is covered by some toleration
// of the whitelist; an empty whitelist allows everything.
func Allowed(tolerations, whitelist []corev1.Toleration) bool {
	if len(whitelist) == 0 {
		return true
	}
next:
	for _, t := range tolerations {
		for _, w := range whitelist {
			if Covers(w, t) {
				continue next
			}
		}
		return false
	}
	return true
}
