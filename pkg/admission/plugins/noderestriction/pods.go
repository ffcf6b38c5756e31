package noderestriction

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/admitd/admitd/pkg/admission"
)

// admitPod checks pods and their status and eviction subresources.
func (r *request) admitPod() error {
	switch r.a.Subresource {
	case "":
		return r.admitPodItself()
	case "status":
		return r.admitPodStatus()
	case "eviction":
		return r.admitEviction()
	}
	return forbidden(r.a, "unexpected pod subresource %q, only 'status' and 'eviction' are allowed", r.a.Subresource)
}

// admitPodItself lets a node create its mirror pods and delete its pods.
func (r *request) admitPodItself() error {
	switch r.a.Operation {
	case admission.Create:
		pod, ok := r.a.Object.(*corev1.Pod)
		if !ok {
			return unexpectedType(r.a, r.a.Object)
		}
		return r.admitMirrorPod(pod)
	case admission.Delete:
		return r.ownPod(r.a.Name, "node %q can only delete pods with spec.nodeName set to itself", r.node)
	}
	return forbidden(r.a, "unexpected operation %q, node %q can only create and delete mirror pods", r.a.Operation, r.node)
}

// ownPod reads the pod name of the request's namespace and refuses it,
// with the message given, unless it is bound to the node.
func (r *request) ownPod(name, format string, args ...any) error {
	pod, err := get[*corev1.Pod](r, podGetter, r.a.Namespace, name)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return admission.NewForbidden(r.a, err)
	}
	if pod.Spec.NodeName != r.node {
		return forbidden(r.a, format, args...)
	}
	return nil
}

// admitMirrorPod lets a node create a mirror pod bound to itself, owned by
// its Node and referencing no other API object.
func (r *request) admitMirrorPod(pod *corev1.Pod) error {
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
		return forbidden(r.a, "pod does not have %q annotation, node %q can only create mirror pods", corev1.MirrorPodAnnotationKey, r.node)
	}
	if pod.Spec.NodeName != r.node {
		return forbidden(r.a, "node %q can only create pods with spec.nodeName set to itself", r.node)
	}
	if err := r.checkMirrorOwner(pod.OwnerReferences); err != nil {
		return err
	}
	refs, what, err := apiObjectReference(pod)
	if err != nil {
		return forbidden(r.a, "error checking mirror pod for API references: %w", err)
	}
	if refs {
		return forbidden(r.a, "node %q can not create pods that reference %s", r.node, what)
	}
	return nil
}

// checkMirrorOwner requires one controller owner reference to the node's
// own Node, with its current UID.
func (r *request) checkMirrorOwner(owners []metav1.OwnerReference) error {
	switch {
	case len(owners) > 1:
		return forbidden(r.a, "node %q can only create pods with a single owner reference set to itself", r.node)
	case len(owners) == 0:
		return forbidden(r.a, "node %q can only create pods with an owner reference set to itself", r.node)
	}
	owner := owners[0]
	if owner.APIVersion != "v1" || owner.Kind != "Node" || owner.Name != r.node {
		return forbidden(r.a, "node %q can only create pods with an owner reference set to itself", r.node)
	}
	if owner.Controller == nil || !*owner.Controller {
		return forbidden(r.a, "node %q can only create pods with a controller owner reference set to itself", r.node)
	}
	if owner.BlockOwnerDeletion != nil && *owner.BlockOwnerDeletion {
		return forbidden(r.a, "node %q must not set blockOwnerDeletion on an owner reference", r.node)
	}
	node, err := get[*corev1.Node](r, nodeGetter, "", r.node)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return forbidden(r.a, "error looking up node %s to verify uid: %v", r.node, err)
	}
	if owner.UID != node.UID {
		return forbidden(r.a, "node %s UID mismatch: expected %s got %s", r.node, owner.UID, node.UID)
	}
	return nil
}

// admitPodStatus lets a node update the status of its pods, but not their
// labels or resource claim statuses.
func (r *request) admitPodStatus() error {
	if r.a.Operation != admission.Update {
		return forbidden(r.a, "unexpected operation %q", r.a.Operation)
	}
	old, ok := r.a.OldObject.(*corev1.Pod)
	if !ok {
		return unexpectedType(r.a, r.a.OldObject)
	}
	if old.Spec.NodeName != r.node {
		return forbidden(r.a, "node %q can only update pod status for pods with spec.nodeName set to itself", r.node)
	}
	pod, ok := r.a.Object.(*corev1.Pod)
	if !ok {
		return unexpectedType(r.a, r.a.Object)
	}
	if !labels.Equals(old.Labels, pod.Labels) {
		return forbidden(r.a, "node %q cannot update labels through pod status", r.node)
	}
	if !claimStatusesEqual(old.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses) {
		return forbidden(r.a, "node %q cannot update resource claim statues", r.node)
	}
	if !extendedClaimStatusEqual(old.Status.ExtendedResourceClaimStatus, pod.Status.ExtendedResourceClaimStatus) {
		return forbidden(r.a, "node %q cannot update extended resource claim status", r.node)
	}
	if !nodeAllocatableClaimStatusesEqual(old.Status.NodeAllocatableResourceClaimStatuses, pod.Status.NodeAllocatableResourceClaimStatuses) {
		return forbidden(r.a, "node %q cannot update node allocatable resource claim statuses", r.node)
	}
	return nil
}

// admitEviction lets a node evict its own pods.
func (r *request) admitEviction() error {
	if r.a.Operation != admission.Create {
		return forbidden(r.a, "unexpected operation %s", r.a.Operation)
	}
	var evictionName string
	switch e := r.a.Object.(type) {
	case *policyv1.Eviction:
		evictionName = e.Name
	case *policyv1beta1.Eviction:
		evictionName = e.Name
	default:
		return unexpectedType(r.a, r.a.Object)
	}
	name := r.a.Name
	if name == "" {
		if evictionName == "" {
			return forbidden(r.a, "could not determine pod from request data")
		}
		name = evictionName
	}
	return r.ownPod(name, "node %s can only evict pods with spec.nodeName set to itself", r.node)
}
