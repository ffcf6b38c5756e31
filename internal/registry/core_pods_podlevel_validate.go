package registry

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"
)

// validatePodLevelResources checks spec.resources (upstream's
// validatePodResources, PodLevelResources being on): not on Windows pods,
// no claims, names cpu, memory and hugepages only, requests within limits,
// and consistent with the containers' requests and limits.
func validatePodLevelResources(spec *corev1.PodSpec, claims sets.Set[string], fldPath *field.Path) field.ErrorList {
	r := spec.Resources
	if r == nil {
		return nil
	}
	path := fldPath.Child("resources")
	if spec.OS != nil && spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(path, "may not be set for a windows pod")}
	}
	var errs field.ErrorList
	if r.Claims != nil {
		errs = append(errs, field.Forbidden(path.Child("claims"), "claims may not be set for Resources at pod-level"))
	}
	errs = append(errs, validateRequirements(r, validatePodLevelResourceName, claims, path)...)
	return append(errs, validatePodLevelConsistency(spec, path)...)
}

func validatePodLevelResourceName(name corev1.ResourceName, path *field.Path) field.ErrorList {
	if errs := validateResourceName(name, path); len(errs) > 0 {
		return errs
	}
	if !resourcehelper.IsSupportedPodLevelResource(name) {
		return field.ErrorList{field.NotSupported(path, name, sets.List(resourcehelper.SupportedPodLevelResources()))}
	}
	return nil
}

// validatePodLevelConsistency: pod-level requests at least the containers'
// summed requests, hugepage limits at least their summed limits, and no
// container limit above the pod's.
func validatePodLevelConsistency(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	r := spec.Resources
	pod := &corev1.Pod{Spec: *spec}
	requests := resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{})
	for _, name := range sortedResourceNames(requests) {
		sum := requests[name]
		if podReq, ok := r.Requests[name]; ok && sum.Cmp(podReq) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), podReq.String(),
				fmt.Sprintf("must be greater than or equal to aggregate container requests of %s", sum.String())))
		}
	}
	limits := resourcehelper.AggregateContainerLimits(pod, resourcehelper.PodResourcesOptions{})
	for _, name := range sortedResourceNames(limits) {
		sum := limits[name]
		if podLimit, ok := r.Limits[name]; ok && isHugePages(name) && sum.Cmp(podLimit) > 0 {
			errs = append(errs, field.Invalid(path.Child("limits").Key(string(name)), podLimit.String(),
				fmt.Sprintf("must be greater than or equal to aggregate container limits of %s", sum.String())))
		}
	}
	for i, c := range spec.Containers {
		for _, name := range sortedResourceNames(c.Resources.Limits) {
			limit := c.Resources.Limits[name]
			if podLimit, ok := r.Limits[name]; ok && limit.Cmp(podLimit) > 0 {
				errs = append(errs, field.Invalid(path.Child("containers").Index(i).Key(string(name)).Child("limits"), limit.String(),
					fmt.Sprintf("must be less than or equal to pod limits of %s", podLimit.String())))
			}
		}
	}
	return errs
}
