package podtolerationrestriction

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/admitd/admitd/pkg/admission"
)

// The feature gates upstream's QoS computation reads.
const (
	gatePodLevelResources    = "PodLevelResources"
	gatePodLevelResourcesQOS = "PodLevelResourcesFixKubeletQOSClass"
)

// podQOS is the pod's QoS class as upstream's admission computes it: the
// class in its status when set, else computed from its resources.
func podQOS(pod *corev1.Pod, gates admission.FeatureGates) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return computeQOS(pod, gates)
}

// computeQOS follows upstream's ComputePodQOS: pod-level resources decide
// when they are set (under PodLevelResources); else BestEffort when no
// container asks for cpu or memory, Guaranteed when every container's cpu
// and memory requests equal their non-zero limits, Burstable otherwise.
func computeQOS(pod *corev1.Pod, gates admission.FeatureGates) corev1.PodQOSClass {
	if r := pod.Spec.Resources; r != nil && gates.Enabled(gatePodLevelResources) &&
		(!gates.Enabled(gatePodLevelResourcesQOS) || podLevelResourcesSet(r)) {
		return requirementsQOS(r)
	}
	var qos corev1.PodQOSClass
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			c := requirementsQOS(&cs[i].Resources)
			switch {
			case c == corev1.PodQOSBurstable:
				return c
			case qos == "":
				qos = c
			case qos != c:
				return corev1.PodQOSBurstable
			}
		}
	}
	if qos == "" {
		return corev1.PodQOSBestEffort
	}
	return qos
}

// podLevelResourcesSet reports whether the pod-level resources name cpu,
// memory or a huge page size (component-helpers' IsPodLevelResourcesSet).
func podLevelResourcesSet(r *corev1.ResourceRequirements) bool {
	for _, l := range []corev1.ResourceList{r.Requests, r.Limits} {
		for name := range l {
			if name == corev1.ResourceCPU || name == corev1.ResourceMemory || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
				return true
			}
		}
	}
	return false
}

func requirementsQOS(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var qos corev1.PodQOSClass
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		c := resourceQOS(r.Requests[name], r.Limits[name])
		switch {
		case c == corev1.PodQOSBurstable:
			return c
		case qos == "":
			qos = c
		case qos != c:
			return corev1.PodQOSBurstable
		}
	}
	return qos
}

func resourceQOS(req, lim resource.Quantity) corev1.PodQOSClass {
	switch {
	case !req.Equal(lim):
		return corev1.PodQOSBurstable
	case req.IsZero():
		return corev1.PodQOSBestEffort
	default:
		return corev1.PodQOSGuaranteed
	}
}
