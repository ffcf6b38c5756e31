package apiserver

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// hasFinalizers reports whether deleting obj must wait: metadata finalizers,
// or for a namespace its spec.finalizers.
func hasFinalizers(res *registry.Resource, obj runtime.Object) bool {
	if len(accessor(obj).GetFinalizers()) > 0 {
		return true
	}
	if ns, ok := obj.(*corev1.Namespace); ok {
		return len(ns.Spec.Finalizers) > 0
	}
	return false
}

// markDeleting sets the deletion timestamp (and a namespace's Terminating
// phase) on an object that has to wait for its finalizers. As upstream's
// markAsDeleting, the first mark bumps a tracked generation and an earlier
// timestamp is kept.
func markDeleting(res *registry.Resource, obj runtime.Object, now time.Time) {
	m := accessor(obj)
	if m.GetDeletionTimestamp() == nil && m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
	t := metav1.NewTime(now.Truncate(time.Second))
	if old := m.GetDeletionTimestamp(); old == nil || old.After(t.Time) {
		m.SetDeletionTimestamp(&t)
	}
	zero := int64(0)
	m.SetDeletionGracePeriodSeconds(&zero)
	if ns, ok := obj.(*corev1.Namespace); ok {
		ns.Status.Phase = corev1.NamespaceTerminating
	}
}
