package noderestriction

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/admitd/admitd/pkg/admission"
)

// admitPVCStatus lets a node change only the capacity, conditions and
// allocated resources (and their statuses) of a claim's status.
func (r *request) admitPVCStatus() error {
	if r.a.Operation != admission.Update {
		return forbidden(r.a, "unexpected operation %q", r.a.Operation)
	}
	old, ok := r.a.OldObject.(*corev1.PersistentVolumeClaim)
	if !ok {
		return unexpectedType(r.a, r.a.OldObject)
	}
	pvc, ok := r.a.Object.(*corev1.PersistentVolumeClaim)
	if !ok {
		return unexpectedType(r.a, r.a.Object)
	}
	old, pvc = withoutNodeFields(old), withoutNodeFields(pvc)
	if !equality.Semantic.DeepEqual(old, pvc) {
		return forbidden(r.a, "node %q is not allowed to update fields other than status.quantity and status.conditions: %v",
			r.node, diff.Diff(internalPVCOf(old), internalPVCOf(pvc)))
	}
	return nil
}

// withoutNodeFields is a copy of pvc without the fields a node may change
// and those that do not count (resourceVersion, managedFields).
func withoutNodeFields(pvc *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	pvc = pvc.DeepCopy()
	pvc.ResourceVersion = ""
	pvc.ManagedFields = nil
	pvc.Status.Capacity = nil
	pvc.Status.Conditions = nil
	pvc.Status.AllocatedResources = nil
	pvc.Status.AllocatedResourceStatuses = nil
	return pvc
}
