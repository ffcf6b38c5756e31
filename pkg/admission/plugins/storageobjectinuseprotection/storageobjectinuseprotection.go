// Package storageobjectinuseprotection is the StorageObjectInUseProtection
// admission plugin: every new PersistentVolume, PersistentVolumeClaim and
// VolumeAttributesClass gets its protection finalizer, which the protection
// controllers remove once nothing uses the object any more.
//
// It only adds finalizers on create; it is not the controller that removes
// them. Upstream also adds the VolumeAttributesClass finalizer only when the
// VolumeAttributesClass gate is on; in 1.37 that gate is GA and locked on, so
// it always does.
package storageobjectinuseprotection

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagev1alpha1 "k8s.io/api/storage/v1alpha1"
	storagev1beta1 "k8s.io/api/storage/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "StorageObjectInUseProtection"

// The finalizers the plugin adds.
const (
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	VACProtectionFinalizer = "kubernetes.io/vac-protection"
)

var (
	pvResource  = schema.GroupResource{Resource: "persistentvolumes"}
	pvcResource = schema.GroupResource{Resource: "persistentvolumeclaims"}
	vacResource = schema.GroupResource{Group: storagev1.GroupName, Resource: "volumeattributesclasses"}
)

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(admission.PluginContext) (admission.Handler, error) {
		return New(), nil
	})
}

// Plugin is the StorageObjectInUseProtection plugin.
type Plugin struct{}

var _ admission.Mutator = (*Plugin)(nil)

// New returns the plugin.
func New() *Plugin { return &Plugin{} }

// Handles CREATE.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Concerns reports whether the request is on persistent volumes, claims or
// volume attributes classes (not a subresource).
func (p *Plugin) Concerns(a *admission.Attributes) bool {
	switch a.Resource.GroupResource() {
	case pvResource, pvcResource, vacResource:
		return a.Subresource == ""
	}
	return false
}

// Admit adds the protection finalizer of a new volume, claim or volume
// attributes class, unless it is already there. An object of another type
// under these resources is left alone, as upstream does.
func (p *Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	if !p.Concerns(a) {
		return nil
	}
	var m *metav1.ObjectMeta
	switch gr := a.Resource.GroupResource(); gr {
	case pvResource:
		if pv, ok := a.Object.(*corev1.PersistentVolume); ok {
			m = &pv.ObjectMeta
		}
	case pvcResource:
		if pvc, ok := a.Object.(*corev1.PersistentVolumeClaim); ok {
			m = &pvc.ObjectMeta
		}
	case vacResource:
		m = vacMeta(a.Object)
	}
	if m == nil {
		return nil
	}
	if f := finalizer(a.Resource.GroupResource()); !slices.Contains(m.Finalizers, f) {
		m.Finalizers = append(m.Finalizers, f)
	}
	return nil
}

// vacMeta is the metadata of a VolumeAttributesClass of any served
// version, or nil when obj is none.
func vacMeta(obj runtime.Object) *metav1.ObjectMeta {
	switch vac := obj.(type) {
	case *storagev1.VolumeAttributesClass:
		return &vac.ObjectMeta
	case *storagev1beta1.VolumeAttributesClass:
		return &vac.ObjectMeta
	case *storagev1alpha1.VolumeAttributesClass:
		return &vac.ObjectMeta
	}
	return nil
}

func finalizer(gr schema.GroupResource) string {
	switch gr {
	case pvResource:
		return PVProtectionFinalizer
	case pvcResource:
		return PVCProtectionFinalizer
	}
	return VACProtectionFinalizer
}
