package registry

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The pods/resize subresource (upstream's podResizeStrategy): a write
// changes only the resources and resize policies of init and regular
// containers, the pod-level resources (InPlacePodLevelResourcesVerticalScaling)
// and, with InPlacePodVerticalScalingMemoryBackedVolumes, the volumes;
// everything else is taken from the stored pod. Generation grows when the
// spec changed (the generic rule of PrepareForUpdate). As upstream's
// ResizeREST sets no reset fields, managedFields record a resize like any
// update (including fields the strategy then dropped).

// podResize is the strategy of pods/resize.
var podResize = SubresourceStrategy{PrepareForUpdate: preparePodResize, ValidateUpdate: validatePodResizeUpdate}

func preparePodResize(obj, old runtime.Object, gates FeatureGates) {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	keepResizeChanges(pod, oldPod, gates)
	if gates.Enabled(gatePodLevelResourcesFixDefaulting) {
		if pod.Spec.Resources == nil && oldPod.Spec.Resources != nil {
			// a client unaware of pod-level resources keeps them
			pod.Spec.Resources = oldPod.Spec.Resources.DeepCopy()
		}
		defaultPodLevelResources(pod, gates)
	}
	dropDisabledResizeFields(&pod.Spec, &oldPod.Spec, gates)
}

// keepResizeChanges replaces everything but what a resize may change with
// the old pod's. Added, removed, reordered or renamed containers leave the
// pod as sent, for validation to refuse.
func keepResizeChanges(pod, old *corev1.Pod, gates FeatureGates) {
	if len(pod.Spec.Containers) != len(old.Spec.Containers) || len(pod.Spec.InitContainers) != len(old.Spec.InitContainers) {
		return
	}
	containers, ok := withResizeFields(old.Spec.Containers, pod.Spec.Containers)
	if !ok {
		containers = pod.Spec.Containers
	}
	inits, ok := withResizeFields(old.Spec.InitContainers, pod.Spec.InitContainers)
	if !ok {
		inits = pod.Spec.InitContainers
	}
	podResources, volumes := pod.Spec.Resources, old.Spec.Volumes
	if gates.Enabled(gateInPlaceResizeMemoryBackedVolumes) {
		volumes = pod.Spec.Volumes
	}
	oldResources := old.Spec.Resources
	pod.Spec = *old.Spec.DeepCopy()
	if gates.Enabled(gateInPlacePodLevelResourcesResize) {
		pod.Spec.Resources = podResources
	} else {
		// Shared with old, as upstream: defaulting them changes both, and
		// validation refuses the resize of a pod that has them.
		pod.Spec.Resources = oldResources
	}
	pod.Spec.Containers, pod.Spec.InitContainers, pod.Spec.Volumes = containers, inits, volumes
	pod.Status = *old.Status.DeepCopy()
	metav1.ResetObjectMetaForStatus(pod, old)
}

// withResizeFields is a copy of old with the resources and resize policies
// of sent; false when a container was renamed or moved (and for an empty
// sent, which is returned as is).
func withResizeFields(old, sent []corev1.Container) ([]corev1.Container, bool) {
	if len(sent) == 0 {
		return sent, true
	}
	out := make([]corev1.Container, len(old))
	for i := range old {
		if old[i].Name != sent[i].Name {
			return nil, false
		}
		old[i].DeepCopyInto(&out[i])
		out[i].Resources, out[i].ResizePolicy = sent[i].Resources, sent[i].ResizePolicy
	}
	return out, true
}

// dropDisabledResizeFields clears what a resize may have set of fields
// whose gate is off, unless the old pod uses them (upstream's
// DropDisabledPodFields, for the fields a resize can reach).
func dropDisabledResizeFields(spec, old *corev1.PodSpec, gates FeatureGates) {
	if !gates.Enabled(gatePodLevelResources) && !podLevelResourcesInUse(old) {
		spec.Resources = nil
	}
	if !gates.Enabled(gateEmptyDirVolumeMode) && !emptyDirModeInUse(old) {
		for i := range spec.Volumes {
			if spec.Volumes[i].EmptyDir != nil {
				spec.Volumes[i].EmptyDir.Mode = nil
			}
		}
	}
}

func podLevelResourcesInUse(spec *corev1.PodSpec) bool {
	return spec.Resources != nil && len(spec.Resources.Requests)+len(spec.Resources.Limits) > 0
}

func emptyDirModeInUse(spec *corev1.PodSpec) bool {
	for _, v := range spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.Mode != nil {
			return true
		}
	}
	return false
}
