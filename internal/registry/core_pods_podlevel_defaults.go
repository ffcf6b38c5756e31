package registry

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// defaultPodLevelResources completes set pod-level resources from the
// containers' (upstream's DefaultPodLevelResources, with PodLevelResources
// and PodLevelResourcesFixDefaulting on): hugepage limits from the summed
// container limits, requests from the summed container requests and from
// the pod-level limits, then limits of requested resources that every
// container limits.
func defaultPodLevelResources(pod *corev1.Pod, gates FeatureGates) {
	if !gates.Enabled(gatePodLevelResources) || !gates.Enabled(gatePodLevelResourcesFixDefaulting) {
		return
	}
	r := pod.Spec.Resources
	if r == nil || len(r.Requests) == 0 && len(r.Limits) == 0 {
		return
	}
	containers := &corev1.Pod{Spec: corev1.PodSpec{Containers: pod.Spec.Containers, InitContainers: pod.Spec.InitContainers}}
	defaultPodLevelHugePageLimits(r, containers)
	defaultPodLevelRequests(r, containers)
	defaultPodLevelLimits(r, &pod.Spec, containers)
}

func defaultPodLevelHugePageLimits(r *corev1.ResourceRequirements, containers *corev1.Pod) {
	limits := r.Limits
	if limits == nil {
		limits = corev1.ResourceList{}
	}
	for name, sum := range resourcehelper.AggregateContainerLimits(containers, resourcehelper.PodResourcesOptions{}) {
		if !isHugePages(name) {
			continue
		}
		if _, ok := r.Requests[name]; ok {
			continue
		}
		if _, ok := limits[name]; !ok {
			limits[name] = sum
		}
	}
	if len(limits) > 0 {
		r.Limits = limits
	}
}

func defaultPodLevelRequests(r *corev1.ResourceRequirements, containers *corev1.Pod) {
	requests := r.Requests
	if requests == nil {
		requests = corev1.ResourceList{}
	}
	for name, sum := range resourcehelper.AggregateContainerRequests(containers, resourcehelper.PodResourcesOptions{}) {
		if _, ok := requests[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) && isOvercommitAllowed(name) {
			requests[name] = sum
		}
	}
	for name, limit := range r.Limits {
		if _, ok := requests[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) {
			requests[name] = limit.DeepCopy()
		}
	}
	if len(requests) > 0 {
		r.Requests = requests
	}
}

// defaultPodLevelLimits sets the limit of each requested resource without
// one, when every container (ephemeral ones included) limits it, to the
// larger of the summed container limits and the pod-level request.
func defaultPodLevelLimits(r *corev1.ResourceRequirements, spec *corev1.PodSpec, containers *corev1.Pod) {
	candidates := map[corev1.ResourceName]bool{}
	for name := range r.Requests {
		if _, ok := r.Limits[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) {
			candidates[name] = true
		}
	}
	dropUnlimited := func(limits corev1.ResourceList) {
		for name := range candidates {
			if _, ok := limits[name]; !ok {
				delete(candidates, name)
			}
		}
	}
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			dropUnlimited(list[i].Resources.Limits)
		}
	}
	for i := range spec.EphemeralContainers {
		dropUnlimited(spec.EphemeralContainers[i].Resources.Limits)
	}
	if len(candidates) == 0 {
		return
	}
	sums := resourcehelper.AggregateContainerLimits(containers, resourcehelper.PodResourcesOptions{})
	for name := range candidates {
		sum, ok := sums[name]
		if !ok {
			continue
		}
		if req := r.Requests[name]; req.Cmp(sum) > 0 {
			sum = req
		}
		if r.Limits == nil {
			r.Limits = corev1.ResourceList{}
		}
		r.Limits[name] = sum
	}
}
