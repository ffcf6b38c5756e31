package controllers

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"
)

// ControllerRefManager adopts and releases the objects of one kind (pods,
// ReplicaSets, ControllerRevisions) for the controller that owns them, as
// upstream's ControllerRefManager (pkg/controller): an orphan the owner
// selects is adopted (a controller reference added), an object the owner
// controls but no longer selects is released (its reference removed).
// Both are strategic merge patches conditional on the object's uid. A
// manager serves one sync of one owner: the server is asked once whether
// the owner may adopt.
type ControllerRefManager[T metav1.Object] struct {
	// Owner is the controller; OwnerKind its kind, for the references.
	Owner     metav1.Object
	OwnerKind schema.GroupVersionKind
	// Kind is the kind of the claimed objects ("Pod"), for errors.
	Kind string
	// Selector selects the objects the owner should control; Match, when
	// not nil, must hold too (a StatefulSet's pods are its members).
	Selector labels.Selector
	Match    func(T) bool
	// Finalizers are added by adoption and removed by release (the Job
	// controller's tracking finalizer).
	Finalizers []string
	// Get reads the owner afresh from the server: adoption is refused
	// unless it is the same object (uid) and is not being deleted.
	Get func(context.Context) (metav1.Object, error)
	// Patch sends a strategic merge patch to obj.
	Patch func(ctx context.Context, obj T, patch []byte) error

	canAdopt *error // the recheck's answer, once asked
}

// Claim returns the objects of objs the owner controls, after adopting the
// orphans it selects and releasing those it controls but no longer
// selects; objects controlled by others are left out. An object gone
// meanwhile is let go; the other failures are returned together, after
// every object was tried.
func (m *ControllerRefManager[T]) Claim(ctx context.Context, objs []T) ([]T, error) {
	var claimed []T
	var errs []error
	for _, obj := range objs {
		ok, err := m.claim(ctx, obj)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			claimed = append(claimed, obj)
		}
	}
	return claimed, utilerrors.NewAggregate(errs)
}

func (m *ControllerRefManager[T]) claim(ctx context.Context, obj T) (bool, error) {
	matches := m.Selector.Matches(labels.Set(obj.GetLabels())) && (m.Match == nil || m.Match(obj))
	ownerDeleted := m.Owner.GetDeletionTimestamp() != nil
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		switch {
		case ref.UID != m.Owner.GetUID():
			return false, nil
		case matches:
			return true, nil
		case ownerDeleted:
			return false, nil
		}
		return false, m.Release(ctx, obj)
	}
	if ownerDeleted || !matches || obj.GetDeletionTimestamp() != nil ||
		(m.Owner.GetNamespace() != "" && m.Owner.GetNamespace() != obj.GetNamespace()) {
		return false, nil
	}
	if err := m.Adopt(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// CanAdopt asks the server, the first time only, whether the owner may
// adopt: it must still be the same object and not be being deleted.
func (m *ControllerRefManager[T]) CanAdopt(ctx context.Context) error {
	if m.canAdopt == nil {
		err := m.recheckOwner(ctx)
		m.canAdopt = &err
	}
	return *m.canAdopt
}

func (m *ControllerRefManager[T]) recheckOwner(ctx context.Context) error {
	fresh, err := m.Get(ctx)
	if err != nil {
		return fmt.Errorf("can't recheck DeletionTimestamp: %v", err)
	}
	if fresh.GetUID() != m.Owner.GetUID() {
		return fmt.Errorf("can't recheck DeletionTimestamp: original %v %v/%v is gone: got uid %v, wanted %v",
			m.OwnerKind.Kind, m.Owner.GetNamespace(), m.Owner.GetName(), fresh.GetUID(), m.Owner.GetUID())
	}
	if fresh.GetDeletionTimestamp() != nil {
		return fmt.Errorf("%v/%v has just been deleted at %v", fresh.GetNamespace(), fresh.GetName(), fresh.GetDeletionTimestamp())
	}
	return nil
}

// Adopt makes the owner obj's controller (and adds the Finalizers), once
// CanAdopt allows it.
func (m *ControllerRefManager[T]) Adopt(ctx context.Context, obj T) error {
	if err := m.CanAdopt(ctx); err != nil {
		return fmt.Errorf("can't adopt %s %v/%v (%v): %v", m.Kind, obj.GetNamespace(), obj.GetName(), obj.GetUID(), err)
	}
	meta := map[string]any{"ownerReferences": []metav1.OwnerReference{*metav1.NewControllerRef(m.Owner, m.OwnerKind)}, "uid": obj.GetUID()}
	if len(m.Finalizers) > 0 {
		meta["finalizers"] = m.Finalizers
	}
	return m.patch(ctx, obj, meta)
}

// Release removes the owner's reference from obj (and the Finalizers);
// an object gone, or whose patch is invalid (its uid changed), is let go.
func (m *ControllerRefManager[T]) Release(ctx context.Context, obj T) error {
	meta := map[string]any{"ownerReferences": []map[string]string{{"$patch": "delete", "uid": string(m.Owner.GetUID())}}, "uid": obj.GetUID()}
	if len(m.Finalizers) > 0 {
		meta["$deleteFromPrimitiveList/finalizers"] = m.Finalizers
	}
	err := m.patch(ctx, obj, meta)
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil
	}
	return err
}

func (m *ControllerRefManager[T]) patch(ctx context.Context, obj T, meta map[string]any) error {
	body, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	return m.Patch(ctx, obj, body)
}

// PatchPods, PatchReplicaSets and PatchControllerRevisions are
// ControllerRefManager Patch functions sending through client.
func PatchPods(client kubernetes.Interface) func(context.Context, *corev1.Pod, []byte) error {
	return func(ctx context.Context, pod *corev1.Pod, body []byte) error {
		_, err := client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{})
		return err
	}
}

func PatchReplicaSets(client kubernetes.Interface) func(context.Context, *appsv1.ReplicaSet, []byte) error {
	return func(ctx context.Context, rs *appsv1.ReplicaSet, body []byte) error {
		_, err := client.AppsV1().ReplicaSets(rs.Namespace).Patch(ctx, rs.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{})
		return err
	}
}

func PatchControllerRevisions(client kubernetes.Interface) func(context.Context, *appsv1.ControllerRevision, []byte) error {
	return func(ctx context.Context, cr *appsv1.ControllerRevision, body []byte) error {
		_, err := client.AppsV1().ControllerRevisions(cr.Namespace).Patch(ctx, cr.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{})
		return err
	}
}
