package limitranger

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// setDefaults fills the defaults of lr into the containers, then the init
// containers, of pod, and records what it set in the pod's annotation
// (replacing the annotation only when it set something).
func setDefaults(lr *corev1.LimitRange, pod *corev1.Pod) {
	var parts []string
	for i := range pod.Spec.Containers {
		parts = mergeDefaults(&pod.Spec.Containers[i], lr, "container", parts)
	}
	for i := range pod.Spec.InitContainers {
		parts = mergeDefaults(&pod.Spec.InitContainers[i], lr, "init container", parts)
	}
	if len(parts) == 0 {
		return
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[Annotation] = "LimitRanger plugin set: " + strings.Join(parts, "; ")
}

// The two defaults a Container item gives.
func defaultRequests(item *corev1.LimitRangeItem) corev1.ResourceList { return item.DefaultRequest }
func defaultLimits(item *corev1.LimitRangeItem) corev1.ResourceList   { return item.Default }

// mergeDefaults sets each default the container lacks and appends to parts
// what it set: "<names> request for <what> <name>", then the same for limits.
// Like upstream it leaves the container with non-nil requests and limits.
func mergeDefaults(c *corev1.Container, lr *corev1.LimitRange, what string, parts []string) []string {
	if c.Resources.Limits == nil {
		c.Resources.Limits = make(corev1.ResourceList, defaultsSize(lr, defaultLimits))
	}
	if c.Resources.Requests == nil {
		c.Resources.Requests = make(corev1.ResourceList, defaultsSize(lr, defaultRequests))
	}
	var limitsBuf, requestsBuf [8]string
	setLimits := fill(c.Resources.Limits, lr, defaultLimits, limitsBuf[:0])
	setRequests := fill(c.Resources.Requests, lr, defaultRequests, requestsBuf[:0])
	if len(setRequests) > 0 {
		parts = append(parts, strings.Join(setRequests, ", ")+" request for "+what+" "+c.Name)
	}
	if len(setLimits) > 0 {
		parts = append(parts, strings.Join(setLimits, ", ")+" limit for "+what+" "+c.Name)
	}
	return parts
}

// defaultsSize is how many defaults of one kind the Container items of lr
// give at most: the size to make a container's empty list with.
func defaultsSize(lr *corev1.LimitRange, of func(*corev1.LimitRangeItem) corev1.ResourceList) int {
	n := 0
	for i := range lr.Spec.Limits {
		if item := &lr.Spec.Limits[i]; item.Type == corev1.LimitTypeContainer {
			n += len(of(item))
		}
	}
	return n
}

// fill copies into list each default of the Container items of lr that it
// lacks — a later item's default wins over an earlier one's, so the items
// are read last first — and returns set with the names it copied appended,
// sorted.
func fill(list corev1.ResourceList, lr *corev1.LimitRange, of func(*corev1.LimitRangeItem) corev1.ResourceList, set []string) []string {
	for i := len(lr.Spec.Limits) - 1; i >= 0; i-- {
		item := &lr.Spec.Limits[i]
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for k, v := range of(item) {
			if _, ok := list[k]; !ok {
				list[k] = v.DeepCopy()
				set = append(set, string(k))
			}
		}
	}
	slices.Sort(set)
	return set
}
