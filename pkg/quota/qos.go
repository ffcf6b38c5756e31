package quota

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// podQOS is the pod's QoS class: the one in its status, else computed as
// the kubelet does (pod-level resources decide when set and the gate is on;
// else BestEffort when no container states cpu or memory, Guaranteed when
// each container's cpu and memory requests equal their non-zero limits,
// Burstable otherwise).
func podQOS(pod *corev1.Pod, podLevel bool) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	if podLevel && pod.Spec.Resources != nil && resourcehelper.IsPodLevelResourcesSet(pod) {
		return requirementsQOS(pod.Spec.Resources)
	}
	var class corev1.PodQOSClass
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			c := requirementsQOS(&cs[i].Resources)
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

func requirementsQOS(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var class corev1.PodQOSClass
	for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := r.Requests[n], r.Limits[n]
		var c corev1.PodQOSClass
		switch {
		case !req.Equal(lim):
			c = corev1.PodQOSBurstable
		case req.IsZero():
			c = corev1.PodQOSBestEffort
		default:
			c = corev1.PodQOSGuaranteed
		}
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
