package limitranger

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// setDefaults fills the defaults of lr into the containers, then the init
// containers, of pod, and records what it set in the pod's annotation
// (replacing the annotation only when it set something).
func setDefaults(lr *corev1.LimitRange, pod *corev1.Pod) {
	// The annotation is built in place: one allocation when anything was
	// set, none otherwise.
	var buf [256]byte
	text := buf[:0]
	for i := range pod.Spec.Containers {
		text = mergeDefaults(&pod.Spec.Containers[i], lr, "container", text)
	}
	for i := range pod.Spec.InitContainers {
		text = mergeDefaults(&pod.Spec.InitContainers[i], lr, "init container", text)
	}
	if len(text) == 0 {
		return
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[Annotation] = string(text)
}

// The two defaults a Container item gives.
func defaultRequests(item *corev1.LimitRangeItem) corev1.ResourceList { return item.DefaultRequest }
func defaultLimits(item *corev1.LimitRangeItem) corev1.ResourceList   { return item.Default }

// mergeDefaults sets each default the container lacks and appends to text
// what it set: "<names> request for <what> <name>", then the same for
// limits, each part after "LimitRanger plugin set: " or "; ". Like
// upstream it leaves the container with non-nil requests and limits.
func mergeDefaults(c *corev1.Container, lr *corev1.LimitRange, what string, text []byte) []byte {
	if c.Resources.Limits == nil {
		c.Resources.Limits = make(corev1.ResourceList, defaultsSize(lr, defaultLimits))
	}
	if c.Resources.Requests == nil {
		c.Resources.Requests = make(corev1.ResourceList, defaultsSize(lr, defaultRequests))
	}
	var limitsBuf, requestsBuf [8]string
	setLimits := fill(c.Resources.Limits, lr, defaultLimits, limitsBuf[:0])
	setRequests := fill(c.Resources.Requests, lr, defaultRequests, requestsBuf[:0])
	text = appendPart(text, setRequests, " request for ", what, c.Name)
	return appendPart(text, setLimits, " limit for ", what, c.Name)
}

// appendPart appends "<names, comma-separated><kind><what> <name>" to text,
// after the annotation's prefix or the parts before it; nothing when names
// is empty.
func appendPart(text []byte, names []string, kind, what, name string) []byte {
	if len(names) == 0 {
		return text
	}
	if len(text) == 0 {
		text = append(text, "LimitRanger plugin set: "...)
	} else {
		text = append(text, "; "...)
	}
	for i, n := range names {
		if i > 0 {
			text = append(text, ", "...)
		}
		text = append(text, n...)
	}
	text = append(text, kind...)
	text = append(text, what...)
	text = append(text, ' ')
	return append(text, name...)
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
