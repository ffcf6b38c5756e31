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

	"k8s.io/apimachinery/pkg/api/meta"
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

// finalizers maps each protected resource to its finalizer.
var finalizers = map[schema.GroupResource]string{
	{Resource: "persistentvolumes"}:                                PVProtectionFinalizer,
	{Resource: "persistentvolumeclaims"}:                           PVCProtectionFinalizer,
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}: VACProtectionFinalizer,
}

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

// Admit adds the protection finalizer of a new volume, claim or volume
// attributes class, unless it is already there.
func (p *Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	f, ok := finalizers[a.Resource.GroupResource()]
	if !ok || a.Subresource != "" || a.Object == nil {
		return nil
	}
	m, err := meta.Accessor(a.Object)
	if err != nil {
		return nil
	}
	if fs := m.GetFinalizers(); !slices.Contains(fs, f) {
		m.SetFinalizers(append(fs, f))
	}
	return nil
}
