// Package qos classifies pods by quality of service as Kubernetes 1.37 does
// (upstream's ComputePodQOS and GetPodQOS): the one classification the
// registry (a pod's status.qosClass, resize checks), the quota evaluators
// (BestEffort scopes) and PodTolerationRestriction share.
package qos

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// FeatureGates answers whether a feature gate is on.
type FeatureGates interface {
	Enabled(name string) bool
}

// The gates the classification reads.
const (
	gatePodLevelResources       = "PodLevelResources"
	gatePodLevelResourcesFixQOS = "PodLevelResourcesFixKubeletQOSClass"
)

// Of is the class recorded in the pod's status, else the computed one.
func Of(pod *corev1.Pod, gates FeatureGates) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return Compute(pod, gates)
}

// Compute classifies pod by its pod-level resources when they are set (and
// PodLevelResources is on), else by combining every init and regular
// container's class: BestEffort when none states cpu or memory, Guaranteed
// when all have equal non-zero cpu and memory requests and limits,
// Burstable otherwise.
func Compute(pod *corev1.Pod, gates FeatureGates) corev1.PodQOSClass {
	if r := pod.Spec.Resources; gates.Enabled(gatePodLevelResources) && r != nil &&
		(!gates.Enabled(gatePodLevelResourcesFixQOS) || resourcehelper.IsPodLevelResourcesSet(pod)) {
		return requirementsQOS(r)
	}
	var class corev1.PodQOSClass
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if class = combine(class, requirementsQOS(&list[i].Resources)); class == corev1.PodQOSBurstable {
				return class
			}
		}
	}
	if class == "" {
		return corev1.PodQOSBestEffort
	}
	return class
}

// requirementsQOS is the class of one set of requirements.
func requirementsQOS(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var class corev1.PodQOSClass
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if class = combine(class, resourceQOS(r, name)); class == corev1.PodQOSBurstable {
			return class
		}
	}
	return class
}

// combine is the class of two parts: the same class, or Burstable when
// they differ ("" is no part yet).
func combine(class, part corev1.PodQOSClass) corev1.PodQOSClass {
	switch {
	case class == "", class == part:
		return part
	}
	return corev1.PodQOSBurstable
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
