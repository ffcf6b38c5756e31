// Package persistentvolumeclaimresize is the PersistentVolumeClaimResize
// admission plugin: a PersistentVolumeClaim may only grow when it is bound
// and its StorageClass, unchanged by the update, allows volume expansion.
//
// It reads StorageClasses from the server's watch-fed cache. It does not
// check shrinking (validation refuses that) nor the claim's status updates.
package persistentvolumeclaimresize

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "PersistentVolumeClaimResize"

// betaClassAnnotation names a claim's class; it takes precedence over
// spec.storageClassName.
const betaClassAnnotation = "volume.beta.kubernetes.io/storage-class"

var (
	pvcResource          = schema.GroupResource{Resource: "persistentvolumeclaims"}
	storageClassResource = storagev1.SchemeGroupVersion.WithResource("storageclasses")

	errNotBound = errors.New("Only bound persistent volume claims can be expanded")
	errNoResize = errors.New("only dynamically provisioned pvc can be resized and " +
		"the storageclass that provisions the pvc must support resize")
)

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Cache == nil {
			return nil, errors.New("missing object cache")
		}
		return New(pc.Cache), nil
	})
}

// Plugin is the PersistentVolumeClaimResize plugin.
type Plugin struct {
	cache admission.ObjectCache
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin reading StorageClasses from cache.
func New(cache admission.ObjectCache) *Plugin { return &Plugin{cache: cache} }

// Handles UPDATE.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Update }

// Concerns reports whether the request is on persistent volume claims (not
// a subresource).
func (p *Plugin) Concerns(a *admission.Attributes) bool {
	return a.Resource.GroupResource() == pvcResource && a.Subresource == ""
}

// Validate refuses growing a claim that is not bound or whose class does not
// allow expansion.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if !p.Concerns(a) {
		return nil
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	old, ok := a.OldObject.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	newSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	oldSize := old.Spec.Resources.Requests[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) <= 0 {
		return nil
	}
	if old.Status.Phase != corev1.ClaimBound {
		return admission.NewForbidden(a, errNotBound)
	}
	if !p.allowResize(ctx, pvc, old) {
		return admission.NewForbidden(a, errNoResize)
	}
	return nil
}

// allowResize reports whether both versions of the claim name the same
// class and that class allows expansion.
func (p *Plugin) allowResize(ctx context.Context, pvc, old *corev1.PersistentVolumeClaim) bool {
	class, oldClass := className(pvc), className(old)
	if class == "" || class != oldClass {
		return false
	}
	obj, err := p.cache.GetCachedObject(ctx, storageClassResource, "", class)
	if err != nil {
		return false
	}
	sc, ok := obj.(*storagev1.StorageClass)
	return ok && sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
}

// className is the claim's class: the beta annotation, else the field.
func className(pvc *corev1.PersistentVolumeClaim) string {
	if c, ok := pvc.Annotations[betaClassAnnotation]; ok {
		return c
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}
