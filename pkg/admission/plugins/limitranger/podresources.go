package limitranger

import (
	corev1 "k8s.io/api/core/v1"
)

// podRequests is what a Pod item bounds: the sum over the containers and
// the restartable (sidecar) init containers, raised to the largest
// non-restartable init container plus the sidecars started before it; with
// pod-level resources, the pod's own cpu and memory requests replace the
// sums. Only the spec counts, never the status.
func podRequests(pod *corev1.Pod, opts Options) corev1.ResourceList {
	return podTotal(pod, opts, func(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Requests })
}

// podLimits is podRequests for limits.
func podLimits(pod *corev1.Pod, opts Options) corev1.ResourceList {
	return podTotal(pod, opts, func(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Limits })
}

func podTotal(pod *corev1.Pod, opts Options, of func(*corev1.ResourceRequirements) corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		addList(total, of(&pod.Spec.Containers[i].Resources))
	}
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		own := of(&c.Resources)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addList(total, own)
			addList(sidecars, own)
			own = sidecars
		} else {
			sum := corev1.ResourceList{}
			addList(sum, own)
			addList(sum, sidecars)
			own = sum
		}
		maxList(initMax, own)
	}
	maxList(total, initMax)
	if opts.PodLevelResources && pod.Spec.Resources != nil {
		for name, q := range of(pod.Spec.Resources) {
			if name == corev1.ResourceCPU || name == corev1.ResourceMemory {
				total[name] = q
			}
		}
	}
	return total
}

// addList adds each quantity of add to list.
func addList(list, add corev1.ResourceList) {
	for name, q := range add {
		if v, ok := list[name]; ok {
			v.Add(q)
			list[name] = v
		} else {
			list[name] = q.DeepCopy()
		}
	}
}

// maxList raises each quantity of list to the one of other when greater.
func maxList(list, other corev1.ResourceList) {
	for name, q := range other {
		if v, ok := list[name]; !ok || q.Cmp(v) > 0 {
			list[name] = q.DeepCopy()
		}
	}
}
