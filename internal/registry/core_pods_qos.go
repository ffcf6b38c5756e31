package registry

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// The feature gates pod preparation and validation read.
const (
	gatePodLevelResources                = "PodLevelResources"
	gatePodLevelResourcesFixKubeletQOS   = "PodLevelResourcesFixKubeletQOSClass"
	gatePodLevelResourcesFixDefaulting   = "PodLevelResourcesFixDefaulting"
	gateInPlacePodLevelResourcesResize   = "InPlacePodLevelResourcesVerticalScaling"
	gateInPlaceResizeInitContainers      = "InPlacePodVerticalScalingInitContainers"
	gateInPlaceResizeMemoryBackedVolumes = "InPlacePodVerticalScalingMemoryBackedVolumes"
	gateEmptyDirVolumeMode               = "EmptyDirVolumeMode"
)

// computePodQOS is podQOS with every gate at its default.
func computePodQOS(pod *corev1.Pod) corev1.PodQOSClass { return podQOS(pod, defaultGates{}) }

// storedPodQOS is the class recorded in the pod's status, else the computed
// one (upstream's GetPodQOS).
func storedPodQOS(pod *corev1.Pod, gates FeatureGates) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return podQOS(pod, gates)
}

// podQOS classifies a pod as upstream's ComputePodQOS: by its pod-level
// resources when they are set (and PodLevelResources is on), else by
// combining the class of every init and regular container.
func podQOS(pod *corev1.Pod, gates FeatureGates) corev1.PodQOSClass {
	if r := pod.Spec.Resources; gates.Enabled(gatePodLevelResources) && r != nil &&
		(!gates.Enabled(gatePodLevelResourcesFixKubeletQOS) || resourcehelper.IsPodLevelResourcesSet(pod)) {
		return requirementsQOS(r)
	}
	var class corev1.PodQOSClass
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := requirementsQOS(&list[i].Resources)
			switch {
			case c == corev1.PodQOSBurstable:
				return c
			case class == "":
				class = c
			case class != c:
				return corev1.PodQOSBurstable
			}
		}
	}
	if class == "" {
		return corev1.PodQOSBestEffort
	}
	return class
}

// requirementsQOS is the class of one set of requirements: BestEffort
// without cpu and memory, Guaranteed when both have equal non-zero requests
// and limits, Burstable otherwise.
func requirementsQOS(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var class corev1.PodQOSClass
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		c := resourceQOS(r, name)
		switch {
		case c == corev1.PodQOSBurstable:
			return c
		case class == "":
			class = c
		case class != c:
			return corev1.PodQOSBurstable
		}
	}
	return class
}

func resourceQOS(r *corev1.ResourceRequirements, name corev1.ResourceName) corev1.PodQOSClass {
	req, limit := r.Requests[name], r.Limits[name]
	switch {
	case !req.Equal(limit):
		return corev1.PodQOSBurstable
	case req.IsZero():
		return corev1.PodQOSBestEffort
	}
	return corev1.PodQOSGuaranteed
}
