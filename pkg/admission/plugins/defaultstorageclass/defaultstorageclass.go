// Package defaultstorageclass is the DefaultStorageClass admission plugin: a
// PersistentVolumeClaim created without a class (no spec.storageClassName,
// not even "", and no volume.beta.kubernetes.io/storage-class annotation)
// gets the cluster's default StorageClass. When several classes are marked
// default, the newest wins, ties going to the first name in order.
//
// It reads StorageClasses from the server's watch-fed cache. It does not
// validate the class a claim names, nor touch claims on update.
package defaultstorageclass

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/defaultclass"
)

// Name is the upstream plugin name.
const Name = "DefaultStorageClass"

// The annotations that mark a StorageClass as the default (either one) and
// the beta annotation that names a claim's class.
const (
	IsDefaultAnnotation     = "storageclass.kubernetes.io/is-default-class"
	BetaIsDefaultAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
	BetaClassAnnotation     = "volume.beta.kubernetes.io/storage-class"
)

var (
	pvcResource          = schema.GroupResource{Resource: "persistentvolumeclaims"}
	storageClassResource = storagev1.SchemeGroupVersion.WithResource("storageclasses")
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

// Plugin is the DefaultStorageClass plugin.
type Plugin struct {
	cache admission.ObjectCache
}

var _ admission.Mutator = (*Plugin)(nil)

// New returns the plugin reading StorageClasses from cache.
func New(cache admission.ObjectCache) *Plugin { return &Plugin{cache: cache} }

// Handles CREATE.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Concerns reports whether the request is on persistent volume claims (not
// a subresource).
func (p *Plugin) Concerns(a *admission.Attributes) bool {
	return a.Resource.GroupResource() == pvcResource && a.Subresource == ""
}

// Admit sets the default class of a new claim that names none.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if !p.Concerns(a) {
		return nil
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok || hasClass(pvc) {
		return nil
	}
	def, err := p.defaultClass(ctx)
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if def != "" {
		pvc.Spec.StorageClassName = &def
	}
	return nil
}

// hasClass reports whether the claim asked for a class, even the empty one.
func hasClass(pvc *corev1.PersistentVolumeClaim) bool {
	if _, ok := pvc.Annotations[BetaClassAnnotation]; ok {
		return true
	}
	return pvc.Spec.StorageClassName != nil
}

// IsDefault reports whether a StorageClass is marked as the default.
func IsDefault(sc *storagev1.StorageClass) bool {
	return sc.Annotations[IsDefaultAnnotation] == "true" || sc.Annotations[BetaIsDefaultAnnotation] == "true"
}

// defaultClass names the default StorageClass, or "" when there is none.
func (p *Plugin) defaultClass(ctx context.Context) (string, error) {
	return defaultclass.Name(ctx, p.cache, storageClassResource, IsDefault)
}
