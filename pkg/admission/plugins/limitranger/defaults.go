package limitranger

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
)

// setDefaults fills the defaults of lr into the containers, then the init
// containers, of pod, and records what it set in the pod's annotation
// (replacing the annotation only when it set something).
func setDefaults(lr *compiledRange, pod *corev1.Pod) {
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
	pod.Annotations[Annotation] = lr.annotationText(text)
}

// annotationText returns text as a string: the one it returned last when
// the text is the same (the pods of one template get the same annotation),
// a new one otherwise.
func (c *compiledRange) annotationText(text []byte) string {
	if last := c.lastAnnotation.Load(); last != nil && *last == string(text) {
		return *last
	}
	s := string(text)
	c.lastAnnotation.Store(&s)
	return s
}

// mergeDefaults sets each default the container lacks and appends to text
// what it set: "<names> request for <what> <name>", then the same for
// limits, each part after "LimitRanger plugin set: " or "; ". Like
// upstream it leaves the container with non-nil requests and limits.
func mergeDefaults(c *corev1.Container, lr *compiledRange, what string, text []byte) []byte {
	var limitsBuf, requestsBuf [8]corev1.ResourceName
	setLimits := defaultList(&c.Resources.Limits, &lr.limits, limitsBuf[:0])
	setRequests := defaultList(&c.Resources.Requests, &lr.requests, requestsBuf[:0])
	text = appendPart(text, setRequests, " request for ", what, c.Name)
	return appendPart(text, setLimits, " limit for ", what, c.Name)
}

// defaultList fills *list with the defaults it lacks, making it when nil,
// and returns set with the names it filled appended.
func defaultList(list *corev1.ResourceList, d *defaults, set []corev1.ResourceName) []corev1.ResourceName {
	if *list == nil {
		if d.template != nil {
			// A copy of the filled list: no hashing and no copying of
			// each quantity.
			*list = maps.Clone(d.template)
			return append(set, d.names...)
		}
		*list = make(corev1.ResourceList, len(d.byName))
	}
	return fill(*list, d.byName, set)
}

// appendPart appends "<names, comma-separated><kind><what> <name>" to text,
// after the annotation's prefix or the parts before it; nothing when names
// is empty.
func appendPart(text []byte, names []corev1.ResourceName, kind, what, name string) []byte {
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

// fill copies into list each of defaults (ordered by name) that it lacks
// and returns set with the names it copied appended, in that order.
func fill(list corev1.ResourceList, defaults []namedQuantity, set []corev1.ResourceName) []corev1.ResourceName {
	for _, d := range defaults {
		if _, ok := list[d.name]; !ok {
			list[d.name] = d.q.DeepCopy()
			set = append(set, d.name)
		}
	}
	return set
}
