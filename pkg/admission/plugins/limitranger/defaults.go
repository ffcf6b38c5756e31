package limitranger

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// defaultRequirements are the requests and limits the Container items of
// lr give a container that sets none; a later item overrides an earlier
// one.
func defaultRequirements(lr *corev1.LimitRange) corev1.ResourceRequirements {
	d := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for k, v := range item.DefaultRequest {
			d.Requests[k] = v.DeepCopy()
		}
		for k, v := range item.Default {
			d.Limits[k] = v.DeepCopy()
		}
	}
	return d
}

// setDefaults fills the defaults of lr into the containers, then the init
// containers, of pod, and records what it set in the pod's annotation
// (replacing the annotation only when it set something).
func setDefaults(lr *corev1.LimitRange, pod *corev1.Pod) {
	d := defaultRequirements(lr)
	var parts []string
	for i := range pod.Spec.Containers {
		parts = mergeDefaults(&pod.Spec.Containers[i], &d, "container", parts)
	}
	for i := range pod.Spec.InitContainers {
		parts = mergeDefaults(&pod.Spec.InitContainers[i], &d, "init container", parts)
	}
	if len(parts) == 0 {
		return
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[Annotation] = "LimitRanger plugin set: " + strings.Join(parts, "; ")
}

// mergeDefaults sets each default the container lacks and appends to parts
// what it set: "<names> request for <what> <name>", then the same for limits.
// Like upstream it leaves the container with non-nil requests and limits.
func mergeDefaults(c *corev1.Container, d *corev1.ResourceRequirements, what string, parts []string) []string {
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	setLimits := fill(c.Resources.Limits, d.Limits)
	setRequests := fill(c.Resources.Requests, d.Requests)
	if len(setRequests) > 0 {
		parts = append(parts, strings.Join(setRequests, ", ")+" request for "+what+" "+c.Name)
	}
	if len(setLimits) > 0 {
		parts = append(parts, strings.Join(setLimits, ", ")+" limit for "+what+" "+c.Name)
	}
	return parts
}

// fill copies into list each entry of defaults it lacks and returns the
// names it copied, sorted.
func fill(list, defaults corev1.ResourceList) []string {
	var set []string
	for k, v := range defaults {
		if _, ok := list[k]; !ok {
			list[k] = v.DeepCopy()
			set = append(set, string(k))
		}
	}
	sort.Strings(set)
	return set
}
