package registry

import (
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/pkg/apis/core/qos"
)

// Resize validation (upstream ValidatePodResize): the new pod must be valid,
// keep its QoS class, containers and init containers (names and order),
// keep every resource it requested or limited, and change nothing but the
// cpu and memory of containers and of the pod, and (with
// InPlacePodVerticalScalingMemoryBackedVolumes) the size of memory-backed
// emptyDir volumes. Static and Windows pods cannot be resized.

var rootPath = field.NewPath("")

func validatePodResizeUpdate(obj, old runtime.Object, gates FeatureGates) field.ErrorList {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	errs := ValidateObjectMetaUpdate(obj, old)
	errs = append(errs, validatePodMetadataAndSpec(pod, oldPod)...)
	if _, static := oldPod.Annotations[mirrorPodAnnotation]; static {
		return field.ErrorList{field.Forbidden(rootPath, "static pods cannot be resized")}
	}
	if oldPod.Spec.OS != nil && oldPod.Spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(rootPath, "windows pods cannot be resized")}
	}
	if qos.Of(oldPod, gates) != qos.Compute(pod, gates) {
		errs = append(errs, field.Invalid(specPath, pod.Status.QOSClass, "Pod QOS Class may not change as a result of resizing"))
	}
	if !nodeSupportsResize(oldPod) {
		errs = append(errs, field.Forbidden(specPath, "Pod running on node without support for resize"))
	}
	masked := pod.Spec.DeepCopy()
	if podLevelResourcesInUse(&oldPod.Spec) || podLevelResourcesInUse(&pod.Spec) {
		if !gates.Enabled(gateInPlacePodLevelResourcesResize) {
			return append(errs, field.Forbidden(rootPath, "resize of pods with pod-level resources is forbidden when InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled"))
		}
		errs = append(errs, validatePodLevelResize(pod, oldPod, masked, gates)...)
	}
	if orderErrs := validateResizeContainerOrder(&pod.Spec, &oldPod.Spec); orderErrs != nil {
		return append(errs, orderErrs...)
	}
	errs = append(errs, validateResizeRemovals(&pod.Spec, &oldPod.Spec, gates)...)
	errs = append(errs, maskContainerResizes(masked, &oldPod.Spec, gates)...)
	errs = append(errs, validateResizeVolumes(pod.Spec.Volumes, oldPod.Spec.Volumes, masked, gates)...)
	if len(errs) > 0 {
		return errs
	}
	if !apiequality.Semantic.DeepEqual(masked, &oldPod.Spec) {
		errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
	}
	return errs
}

// nodeSupportsResize: a pod whose first running container reports no
// resources in its status runs on a node too old to resize; a pod without
// running containers may be resized.
func nodeSupportsResize(pod *corev1.Pod) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Running != nil {
			return c.Resources != nil
		}
	}
	return true
}

func validateResizeContainerOrder(spec, old *corev1.PodSpec) field.ErrorList {
	var errs field.ErrorList
	for _, l := range []struct {
		name      string
		new, old  []corev1.Container
		addRemove string
	}{{"containers", spec.Containers, old.Containers, "containers may not be added or removed on resize"},
		{"initContainers", spec.InitContainers, old.InitContainers, "initContainers may not be added or removed on resize"}} {
		path := specPath.Child(l.name)
		if len(l.new) != len(l.old) {
			errs = append(errs, field.Forbidden(path, l.addRemove))
			continue
		}
		for i := range l.old {
			if l.new[i].Name != l.old[i].Name {
				errs = append(errs, field.Forbidden(path.Index(i).Child("name"), l.name+" may not be renamed or reordered on resize"))
			}
		}
	}
	return errs
}

// validateResizeRemovals refuses requests and limits a resize removes from
// containers and resizable init containers.
func validateResizeRemovals(spec, old *corev1.PodSpec, gates FeatureGates) field.ErrorList {
	var errs field.ErrorList
	for i := range old.InitContainers {
		if !gates.Enabled(gateInPlaceResizeInitContainers) && !isSidecar(&old.InitContainers[i]) {
			continue
		}
		errs = append(errs, validateRequirementRemovals(&spec.InitContainers[i].Resources, &old.InitContainers[i].Resources,
			specPath.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range old.Containers {
		errs = append(errs, validateRequirementRemovals(&spec.Containers[i].Resources, &old.Containers[i].Resources,
			specPath.Child("containers").Index(i).Child("resources"))...)
	}
	return errs
}

func validateRequirementRemovals(r, old *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if resourcesRemoved(r.Requests, old.Requests) {
		errs = append(errs, field.Forbidden(path.Child("requests"), "resource requests cannot be removed"))
	}
	if resourcesRemoved(r.Limits, old.Limits) {
		errs = append(errs, field.Forbidden(path.Child("limits"), "resource limits cannot be removed"))
	}
	return errs
}

func resourcesRemoved(list, old corev1.ResourceList) bool {
	if len(old) > len(list) {
		return true
	}
	for name := range old {
		if _, ok := list[name]; !ok {
			return true
		}
	}
	return false
}

func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// maskContainerResizes puts old's cpu and memory back into masked's
// containers and refuses containers that still differ from old's.
func maskContainerResizes(masked, old *corev1.PodSpec, gates FeatureGates) field.ErrorList {
	var errs field.ErrorList
	for i := range masked.Containers {
		c := &masked.Containers[i]
		maskCPUMemory(c, &old.Containers[i])
		if !apiequality.Semantic.DeepEqual(c, &old.Containers[i]) {
			errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
		}
	}
	for i := range masked.InitContainers {
		c, o := &masked.InitContainers[i], &old.InitContainers[i]
		sidecar := isSidecar(c)
		changed := !apiequality.Semantic.DeepEqual(c, o)
		path := specPath.Child("initContainers").Index(i)
		if !sidecar && !gates.Enabled(gateInPlaceResizeInitContainers) {
			if changed {
				errs = append(errs, field.Forbidden(specPath, "resources for non-sidecar init containers are immutable"))
			}
			continue
		}
		maskCPUMemory(c, o)
		if !apiequality.Semantic.DeepEqual(c, o) {
			errs = append(errs, field.Forbidden(path, "only cpu and memory resources for init or sidecar containers are mutable"))
		}
		if changed && !sidecar {
			for _, p := range c.ResizePolicy {
				if p.RestartPolicy == corev1.RestartContainer {
					errs = append(errs, field.Forbidden(path, "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"))
				}
			}
		}
	}
	return errs
}

// maskCPUMemory gives c old's cpu and memory requests and limits (claims
// stay c's).
func maskCPUMemory(c, old *corev1.Container) {
	c.Resources = corev1.ResourceRequirements{
		Limits:   withOldCPUMemory(c.Resources.Limits, old.Resources.Limits),
		Requests: withOldCPUMemory(c.Resources.Requests, old.Resources.Requests),
		Claims:   c.Resources.Claims,
	}
}

// withOldCPUMemory is list with its cpu and memory replaced by old's (nil
// when both are nil).
func withOldCPUMemory(list, old corev1.ResourceList) corev1.ResourceList {
	if list == nil && old == nil {
		return nil
	}
	out := list.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		delete(out, name)
		if q, ok := old[name]; ok {
			out[name] = q
		}
	}
	return out
}
