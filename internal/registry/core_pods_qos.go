package registry

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// computePodQOS classifies a pod as upstream's qos.ComputePodQOS does: from
// the pod-level resources when set (PodLevelResources is on by default),
// otherwise from the cpu and memory of its regular and init containers.
func computePodQOS(pod *corev1.Pod) corev1.PodQOSClass {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	guaranteed := true
	if r := pod.Spec.Resources; r != nil {
		addQOSResources(requests, r.Requests)
		if len(r.Limits) > 0 && !addQOSResources(limits, r.Limits) {
			guaranteed = false
		}
	} else {
		containers := append(append([]corev1.Container{}, pod.Spec.Containers...), pod.Spec.InitContainers...)
		for _, c := range containers {
			addQOSResources(requests, c.Resources.Requests)
			if !addQOSResources(limits, c.Resources.Limits) {
				guaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
				break
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// addQOSResources sums the positive cpu and memory quantities of list into
// total and reports whether both cpu and memory were present.
func addQOSResources(total, list corev1.ResourceList) bool {
	found := 0
	for name, q := range list {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			continue
		}
		if q.Cmp(resource.Quantity{}) <= 0 {
			continue
		}
		found++
		sum := q.DeepCopy()
		if prev, ok := total[name]; ok {
			sum.Add(prev)
		}
		total[name] = sum
	}
	return found == 2
}
