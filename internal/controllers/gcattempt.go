package controllers

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/internal/registry"
)

// attemptToDelete is upstream's attemptToDeleteItem: delete the object if
// none of its owners still stands, or, for an owner in foreground deletion,
// finish once no dependent blocks it.
func (gc *GarbageCollector) attemptToDelete(ctx context.Context, uid types.UID) error {
	n, ok := gc.graph.get(uid)
	if !ok || (n.deleting && !n.foreground) {
		return nil
	}
	latest, r, err := gc.live(ctx, n)
	if err != nil || latest == nil {
		return err
	}
	if latest.GetDeletionTimestamp() != nil && hasFinalizer(latest, metav1.FinalizerDeleteDependents) {
		return gc.processDeletingDependents(ctx, n)
	}
	owners := latest.GetOwnerReferences()
	if len(owners) == 0 {
		return nil
	}
	solid, dangling, waiting, err := gc.classifyOwners(ctx, latest, owners)
	if err != nil {
		return err
	}
	switch {
	case len(solid) > 0:
		if len(dangling) == 0 && len(waiting) == 0 {
			return nil
		}
		// References to owners that are gone or waiting for their
		// dependents go, or those owners would wait forever.
		return gc.patchOwnerRefs(ctx, n, withoutOwners(append(refUIDs(dangling), refUIDs(waiting)...)...))
	case len(waiting) > 0 && len(gc.graph.dependentsOf(uid)) > 0:
		for _, dep := range gc.graph.dependentsOf(uid) {
			if dep.deletingDependents() {
				// A possible cycle: stop blocking the owners first.
				if err := gc.patchOwnerRefs(ctx, n, unblockOwners); err != nil {
					return err
				}
				break
			}
		}
		return gc.deleteObject(ctx, r, latest, metav1.DeletePropagationForeground)
	default:
		policy := metav1.DeletePropagationBackground
		switch {
		case hasFinalizer(latest, metav1.FinalizerOrphanDependents):
			policy = metav1.DeletePropagationOrphan
		case hasFinalizer(latest, metav1.FinalizerDeleteDependents):
			policy = metav1.DeletePropagationForeground
		}
		return gc.deleteObject(ctx, r, latest, policy)
	}
}

func refUIDs(refs []metav1.OwnerReference) []types.UID {
	out := make([]types.UID, 0, len(refs))
	for _, r := range refs {
		out = append(out, r.UID)
	}
	return out
}

func unblockOwners(refs []metav1.OwnerReference) []metav1.OwnerReference {
	no := false
	out := make([]metav1.OwnerReference, 0, len(refs))
	for _, r := range refs {
		r.BlockOwnerDeletion = &no
		out = append(out, r)
	}
	return out
}

// classifyOwners sorts owner references into owners that stand, owners
// that are gone (or were replaced: another uid), and owners waiting in
// foreground deletion.
func (gc *GarbageCollector) classifyOwners(ctx context.Context, dep *unstructured.Unstructured, refs []metav1.OwnerReference) (solid, dangling, waiting []metav1.OwnerReference, err error) {
	for _, ref := range refs {
		owner, gone, err := gc.ownerOf(ctx, dep, ref)
		if err != nil {
			return nil, nil, nil, err
		}
		switch {
		case gone:
			dangling = append(dangling, ref)
		case owner.GetDeletionTimestamp() != nil && hasFinalizer(owner, metav1.FinalizerDeleteDependents):
			waiting = append(waiting, ref)
		default:
			solid = append(solid, ref)
		}
	}
	return solid, dangling, waiting, nil
}

// ownerOf reads the owner a reference names, in the dependent's namespace
// when the owner's kind is namespaced; gone is true when it does not exist
// or has another uid. An owner of a kind the server does not serve counts
// as standing (upstream cannot map it either, and keeps retrying), so the
// dependent is kept.
func (gc *GarbageCollector) ownerOf(ctx context.Context, dep *unstructured.Unstructured, ref metav1.OwnerReference) (*unstructured.Unstructured, bool, error) {
	r, ok := gc.ownerResource(ref)
	if !ok {
		return &unstructured.Unstructured{Object: map[string]any{}}, false, nil
	}
	owner, err := gc.resourceClient(r, dep.GetNamespace()).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return owner, owner.GetUID() != ref.UID, nil
}

// processDeletingDependents finishes a foreground deletion once no
// dependent blocks it, and otherwise (re)queues the blocking dependents.
func (gc *GarbageCollector) processDeletingDependents(ctx context.Context, owner node) error {
	var blocking []node
	for _, dep := range gc.graph.dependentsOf(owner.uid) {
		if ref, ok := dep.ownerRef(owner.uid); ok && blocks(ref) {
			blocking = append(blocking, dep)
		}
	}
	if len(blocking) == 0 {
		return gc.removeFinalizer(ctx, owner, metav1.FinalizerDeleteDependents)
	}
	for _, dep := range blocking {
		if !dep.deletingDependents() {
			gc.queue.Add(work{uid: dep.uid})
		}
	}
	return nil
}

// deleteObject deletes obj with the given propagation, guarded by its uid
// and resourceVersion.
func (gc *GarbageCollector) deleteObject(ctx context.Context, r *registry.Resource, obj *unstructured.Unstructured, policy metav1.DeletionPropagation) error {
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	err := gc.resourceClient(r, obj.GetNamespace()).Delete(ctx, obj.GetName(), metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, PropagationPolicy: &policy})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
