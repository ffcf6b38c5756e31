// Package quota measures what objects consume of a ResourceQuota: an
// Evaluator per resource (pods, services, persistent volume claims, and an
// object count for any other resource) says which quota resource names it
// tracks, whether a quota's scopes select an object, and the object's usage.
// The ResourceQuota admission plugin charges a request's usage to the
// quotas of its namespace; the quota controller sums the usage of the
// stored objects into status.used. Both follow kube-apiserver 1.37's
// evaluators (k8s.io/kubernetes pkg/quota/v1/evaluator/core and
// k8s.io/apiserver pkg/quota/v1/generic).
package quota

import (
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Add returns a + b, per resource name (a name in one list only is copied).
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(a)+len(b))
	for k, v := range a {
		q := v.DeepCopy()
		if o, ok := b[k]; ok {
			q.Add(o)
		}
		out[k] = q
	}
	for k, v := range b {
		if _, ok := out[k]; !ok {
			out[k] = v.DeepCopy()
		}
	}
	return out
}

// SubtractNonNegative returns a - b per name, never below zero; a name of b
// missing from a is zero.
func SubtractNonNegative(a, b corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(a)+len(b))
	for k, v := range a {
		q := v.DeepCopy()
		if o, ok := b[k]; ok {
			q.Sub(o)
		}
		if q.Sign() <= 0 {
			q = zero()
		}
		out[k] = q
	}
	for k := range b {
		if _, ok := out[k]; !ok {
			out[k] = zero()
		}
	}
	return out
}

// Mask returns the entries of l whose names are in names.
func Mask(l corev1.ResourceList, names []corev1.ResourceName) corev1.ResourceList {
	out := make(corev1.ResourceList, len(names))
	for _, n := range names {
		if v, ok := l[n]; ok {
			out[n] = v.DeepCopy()
		}
	}
	return out
}

// Exceeded returns the names of limits whose value in used is larger
// (names missing from used are not exceeded), sorted.
func Exceeded(used, limits corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for k, lim := range limits {
		if v, ok := used[k]; ok && v.Cmp(lim) > 0 {
			out = append(out, k)
		}
	}
	SortNames(out)
	return out
}

// Equal reports whether a and b have the same names and equal quantities.
func Equal(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		o, ok := b[k]
		if !ok || v.Cmp(o) != 0 {
			return false
		}
	}
	return true
}

// WithoutZeros returns l without its zero entries.
func WithoutZeros(l corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(l))
	for k, v := range l {
		if !v.IsZero() {
			out[k] = v
		}
	}
	return out
}

// Negative returns the names whose quantity is below zero, sorted.
func Negative(l corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for k, v := range l {
		if v.Sign() < 0 {
			out = append(out, k)
		}
	}
	SortNames(out)
	return out
}

// Names returns the names of l, sorted.
func Names(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	SortNames(out)
	return out
}

// SortNames sorts names in place.
func SortNames(names []corev1.ResourceName) { slices.Sort(names) }

// FormatList writes l as upstream's messages do: name=quantity, sorted by
// name, joined by commas.
func FormatList(l corev1.ResourceList) string {
	var b strings.Builder
	for i, n := range Names(l) {
		if i > 0 {
			b.WriteByte(',')
		}
		v := l[n]
		b.WriteString(string(n))
		b.WriteByte('=')
		b.WriteString(v.String())
	}
	return b.String()
}

// FormatNames writes names sorted and joined by commas.
func FormatNames(names []corev1.ResourceName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

// containsName reports whether names holds n.
func containsName(names []corev1.ResourceName, n corev1.ResourceName) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// intersect returns the names of input that are in known, without
// duplicates, sorted.
func intersect(input, known []corev1.ResourceName) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(input))
	for _, n := range input {
		if containsName(known, n) && !containsName(out, n) {
			out = append(out, n)
		}
	}
	SortNames(out)
	return out
}
