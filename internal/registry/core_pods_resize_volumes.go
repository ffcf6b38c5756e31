package registry

import (
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"
)

// validateResizeVolumes: without InPlacePodVerticalScalingMemoryBackedVolumes
// volumes may not change; with it, only the sizeLimit of memory-backed
// emptyDir volumes that already had one. masked gets old's volumes.
func validateResizeVolumes(volumes, old []corev1.Volume, masked *corev1.PodSpec, gates FeatureGates) field.ErrorList {
	path := specPath.Child("volumes")
	if !gates.Enabled(gateInPlaceResizeMemoryBackedVolumes) {
		if !apiequality.Semantic.DeepEqual(volumes, old) {
			return field.ErrorList{field.Forbidden(path, "volumes are immutable on resize when InPlacePodVerticalScalingMemoryBackedVolumes feature gate is disabled")}
		}
		return nil
	}
	masked.Volumes = old
	if len(volumes) != len(old) {
		return field.ErrorList{field.Forbidden(path, "volumes may not be added or removed on resize")}
	}
	var errs field.ErrorList
	for i := range volumes {
		errs = append(errs, validateResizeVolume(&volumes[i], &old[i], path.Index(i))...)
	}
	return errs
}

func validateResizeVolume(v, old *corev1.Volume, path *field.Path) field.ErrorList {
	if v.Name != old.Name {
		return field.ErrorList{field.Forbidden(path.Child("name"), "volumes may not be renamed or reordered on resize")}
	}
	compared := v
	if v.EmptyDir != nil && old.EmptyDir != nil {
		compared = v.DeepCopy()
		compared.EmptyDir.SizeLimit = old.EmptyDir.SizeLimit
	}
	if !apiequality.Semantic.DeepEqual(compared, old) {
		return field.ErrorList{field.Forbidden(path, "only sizeLimit of memory-backed emptyDir volumes is mutable on resize")}
	}
	if v.EmptyDir == nil || old.EmptyDir == nil {
		return nil
	}
	limit, oldLimit := v.EmptyDir.SizeLimit, old.EmptyDir.SizeLimit
	sizePath := path.Child("emptyDir", "sizeLimit")
	switch {
	case (oldLimit != nil && !oldLimit.IsZero()) != (limit != nil && !limit.IsZero()):
		return field.ErrorList{field.Forbidden(sizePath, "adding or removing sizeLimit on an existing volume is not allowed")}
	case limit != nil && oldLimit != nil && limit.Cmp(*oldLimit) != 0 && v.EmptyDir.Medium != corev1.StorageMediumMemory:
		return field.ErrorList{field.Forbidden(sizePath, "sizeLimit is only mutable for memory-backed emptyDir volumes")}
	}
	return nil
}

// validatePodLevelResize checks a change of pod-level resources: none may
// be removed, only cpu and memory may change (masked gets old's), and with
// DRANodeAllocatableResources they must still cover the containers' and
// the node-allocatable claims' needs.
func validatePodLevelResize(pod, old *corev1.Pod, masked *corev1.PodSpec, gates FeatureGates) field.ErrorList {
	path := specPath.Child("resources")
	if old.Spec.Resources != nil && pod.Spec.Resources == nil {
		return field.ErrorList{field.Forbidden(path, "pod-level resources cannot be removed")}
	}
	var errs field.ErrorList
	if o := old.Spec.Resources; o != nil {
		if resourcesRemoved(pod.Spec.Resources.Requests, o.Requests) {
			errs = append(errs, field.Forbidden(path.Child("requests"), "pod-level resource requests cannot be removed"))
		}
		if resourcesRemoved(pod.Spec.Resources.Limits, o.Limits) {
			errs = append(errs, field.Forbidden(path.Child("limits"), "pod-level resource limits cannot be removed"))
		}
	}
	masked.Resources = maskPodLevelCPUMemory(masked.Resources, old.Spec.Resources)
	if !apiequality.Semantic.DeepEqual(masked.Resources, old.Spec.Resources) {
		errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable at pod-level"))
	}
	if gates.Enabled(gateDRANodeAllocatableResources) && len(pod.Status.NodeAllocatableResourceClaimStatuses) > 0 {
		if msg := podLevelResourcesShortOfDRA(pod); msg != "" {
			errs = append(errs, field.Invalid(path, pod.Spec.Resources, msg))
		}
	}
	return errs
}

// maskPodLevelCPUMemory is r with old's cpu and memory; nil when old had
// no pod-level resources and nothing else is left.
func maskPodLevelCPUMemory(r, old *corev1.ResourceRequirements) *corev1.ResourceRequirements {
	if r == nil {
		return nil
	}
	var oldRequests, oldLimits corev1.ResourceList
	if old != nil {
		oldRequests, oldLimits = old.Requests, old.Limits
	}
	r.Requests = withOldCPUMemory(r.Requests, oldRequests)
	r.Limits = withOldCPUMemory(r.Limits, oldLimits)
	if old == nil && len(r.Requests) == 0 && len(r.Limits) == 0 && len(r.Claims) == 0 {
		return nil
	}
	return r
}

const gateDRANodeAllocatableResources = "DRANodeAllocatableResources"

// podLevelResourcesShortOfDRA says which pod-level request or limit is
// less than what the containers and their node-allocatable claims need
// ("" when they cover it).
func podLevelResourcesShortOfDRA(pod *corev1.Pod) string {
	r := pod.Spec.Resources
	if r == nil {
		return ""
	}
	opts := resourcehelper.PodResourcesOptions{SkipPodLevelResources: true, UseDRANodeAllocatableResourceClaimStatus: true}
	if r.Requests != nil {
		needed := resourcehelper.AggregateContainerRequests(pod, opts)
		for name, req := range r.Requests {
			if n, ok := needed[name]; ok && resourcehelper.IsSupportedPodLevelResource(name) && n.Cmp(req) > 0 {
				return "pod level request for " + string(name) + " is insufficient to cover the aggregated container and node-allocatable DRA requests"
			}
		}
	}
	if r.Limits == nil {
		return ""
	}
	for name, n := range resourcehelper.AggregateContainerLimits(pod, opts) {
		if limit, ok := r.Limits[name]; ok && isHugePages(name) && n.Cmp(limit) > 0 {
			return "pod level limit for " + string(name) + " is insufficient to cover the aggregated container and node-allocatable DRA limits"
		}
	}
	for _, c := range pod.Spec.Containers {
		dra := resourcehelper.GetContainerDRAAllocations(pod, c.Name)
		for name, limit := range c.Resources.Limits {
			podLimit, ok := r.Limits[name]
			if isHugePages(name) || !ok {
				continue
			}
			effective := limit.DeepCopy()
			effective.Add(dra[name])
			if effective.Cmp(podLimit) > 0 {
				return "pod level limit for " + string(name) + " is insufficient to cover the limit and DRA overhead for container " + c.Name
			}
		}
	}
	return ""
}
