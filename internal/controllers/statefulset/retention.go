package statefulset

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// retentionPolicy is the set's persistentVolumeClaimRetentionPolicy, Retain
// for both when unset.
func retentionPolicy(set *appsv1.StatefulSet) appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy {
	if p := set.Spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		return *p
	}
	return appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType}
}

// refersTo: the reference names obj of kind gvk (uid aside).
func refersTo(ref *metav1.OwnerReference, obj metav1.Object, gvk schema.GroupVersionKind) bool {
	return ref.APIVersion == gvk.GroupVersion().String() && ref.Kind == gvk.Kind && ref.Name == obj.GetName()
}

// hasOwnerRef: target has a reference to owner's uid.
func hasOwnerRef(target, owner metav1.Object) bool {
	for _, ref := range target.GetOwnerReferences() {
		if ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

// hasStaleOwnerRef: the claim refers to obj by kind and name but with
// another uid (an earlier object of that name).
func hasStaleOwnerRef(claim *corev1.PersistentVolumeClaim, obj metav1.Object, gvk schema.GroupVersionKind) bool {
	for _, ref := range claim.OwnerReferences {
		if refersTo(&ref, obj, gvk) && ref.UID != obj.GetUID() {
			return true
		}
	}
	return false
}

// hasUnexpectedController: under a policy that deletes claims, the claim
// has a controller other than the set and the pod, or refers to them with
// a stale uid.
func hasUnexpectedController(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	p := retentionPolicy(set)
	if p.WhenScaled == appsv1.RetainPersistentVolumeClaimRetentionPolicyType && p.WhenDeleted == appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		return false
	}
	for _, ref := range claim.OwnerReferences {
		switch {
		case refersTo(&ref, set, controllerKind):
			if ref.UID != set.UID {
				return true
			}
		case refersTo(&ref, pod, podKind):
			if ref.UID != pod.UID {
				return true
			}
		case ref.Controller != nil && *ref.Controller:
			return true
		}
	}
	return false
}

// hasNonControllerOwner: the set or pod owns the claim without being its
// controller.
func hasNonControllerOwner(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	for _, ref := range claim.OwnerReferences {
		if (ref.UID == set.UID || ref.UID == pod.UID) && (ref.Controller == nil || !*ref.Controller) {
			return true
		}
	}
	return false
}

// wantedOwners says which of the set and the pod should own the claim
// under the set's policy: the set while the pod is in range and claims
// are deleted with the set, the pod once scaled down when claims are
// deleted on scale down.
func wantedOwners(set *appsv1.StatefulSet, pod *corev1.Pod) (bySet, byPod bool) {
	p := retentionPolicy(set)
	del := appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	scaledDown := !inOrdinalRange(pod, set)
	switch {
	case p.WhenScaled == del && p.WhenDeleted == del:
		return !scaledDown, scaledDown
	case p.WhenScaled == del:
		return false, scaledDown
	case p.WhenDeleted == del:
		return true, false
	}
	return false, false
}

// ClaimOwnersUpToDate: the claim's owners are what the policy wants (a
// claim held by an earlier set or pod of the same name, or by another
// controller, is left alone).
func ClaimOwnersUpToDate(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	if hasStaleOwnerRef(claim, set, controllerKind) || hasStaleOwnerRef(claim, pod, podKind) {
		return true
	}
	if hasUnexpectedController(claim, set, pod) {
		return !hasOwnerRef(claim, set) && !hasOwnerRef(claim, pod)
	}
	if hasNonControllerOwner(claim, set, pod) {
		return false
	}
	bySet, byPod := wantedOwners(set, pod)
	return hasOwnerRef(claim, set) == bySet && hasOwnerRef(claim, pod) == byPod
}

// SetClaimOwners rewrites the claim's references to the set and the pod
// as the policy wants (drops them when another controller has it).
func SetClaimOwners(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) {
	unexpected := hasUnexpectedController(claim, set, pod)
	refs := []metav1.OwnerReference{}
	for _, ref := range claim.OwnerReferences {
		if !refersTo(&ref, set, controllerKind) && !refersTo(&ref, pod, podKind) {
			refs = append(refs, ref)
		}
	}
	if !unexpected {
		bySet, byPod := wantedOwners(set, pod)
		if byPod {
			refs = addControllerRef(refs, pod, podKind)
		}
		if bySet {
			refs = addControllerRef(refs, set, controllerKind)
		}
	}
	claim.OwnerReferences = refs
}

func addControllerRef(refs []metav1.OwnerReference, owner metav1.Object, gvk schema.GroupVersionKind) []metav1.OwnerReference {
	for _, ref := range refs {
		if ref.UID == owner.GetUID() {
			return refs
		}
	}
	return append(refs, *metav1.NewControllerRef(owner, gvk))
}
