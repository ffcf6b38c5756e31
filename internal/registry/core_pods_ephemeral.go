package registry

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The pods/ephemeralcontainers subresource, as upstream's
// podEphemeralContainersStrategy: a write through it changes only
// spec.ephemeralContainers (and the metadata a status write may change);
// every other change is dropped, and ephemeral containers may only be
// added, never changed or removed.

const ephemeralContainersSubresource = "ephemeralcontainers"

// podEphemeralContainers is the strategy of pods/ephemeralcontainers.
var podEphemeralContainers = SubresourceStrategy{
	PrepareForUpdate: func(obj, old runtime.Object, _ FeatureGates) {
		prepareEphemeralContainersUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))
	},
	ValidateUpdate: func(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
		return append(ValidateObjectMetaUpdate(obj, old), validateEphemeralContainersUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))...)
	},
}

// prepareEphemeralContainersUpdate keeps pod's ephemeral containers and
// takes the rest of the spec, the status and the metadata a status write
// may not change from old.
func prepareEphemeralContainersUpdate(pod, old *corev1.Pod) {
	ephemeral := pod.Spec.EphemeralContainers
	pod.Spec = *old.Spec.DeepCopy()
	pod.Spec.EphemeralContainers = ephemeral
	pod.Status = *old.Status.DeepCopy()
	metav1.ResetObjectMetaForStatus(&pod.ObjectMeta, &old.ObjectMeta)
}

// validateEphemeralContainersUpdate checks the pod as a whole (metadata
// excluded, which is checked generically), refuses static pods, and
// refuses any change to or removal of an existing ephemeral container
// (patches do not keep their order, so they are matched by name).
func validateEphemeralContainersUpdate(pod, old *corev1.Pod) field.ErrorList {
	errs := validatePodMetadataAndSpec(pod, old)
	errs = append(errs, validatePodAnnotationUpdates(pod.Annotations, old.Annotations)...)
	if _, ok := old.Annotations[mirrorPodAnnotation]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	byName := make(map[string]*corev1.EphemeralContainer, len(pod.Spec.EphemeralContainers))
	for i := range pod.Spec.EphemeralContainers {
		byName[pod.Spec.EphemeralContainers[i].Name] = &pod.Spec.EphemeralContainers[i]
	}
	path := specPath.Child("ephemeralContainers")
	for _, was := range old.Spec.EphemeralContainers {
		now, ok := byName[was.Name]
		switch {
		case !ok:
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", was.Name)))
		case !apiequality.Semantic.DeepEqual(was, *now):
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("existing ephemeral containers %q may not be changed\n%v", was.Name, specDiff(was, *now))))
		}
	}
	return errs
}
