package persistentvolumeclaimresize

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// classes is a cache of StorageClasses by name.
type classes map[string]*storagev1.StorageClass

func (c classes) GetCachedObject(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	if sc, ok := c[name]; ok && gvr == storageClassResource {
		return sc, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (c classes) ListCachedObjects(context.Context, schema.GroupVersionResource, string, labels.Selector) ([]runtime.Object, error) {
	return nil, nil
}

func class(name string, allow *bool) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "p", AllowVolumeExpansion: allow}
}

func claim(size string, class *string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "default"},
		Spec:   corev1.PersistentVolumeClaimSpec{VolumeName: "volume", StorageClassName: class},
		Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
	if size != "" {
		c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	}
	return c
}

func annotated(c *corev1.PersistentVolumeClaim, class string) *corev1.PersistentVolumeClaim {
	c.Annotations = map[string]string{betaClassAnnotation: class}
	return c
}

func ptr[T any](v T) *T { return &v }

func TestValidate(t *testing.T) {
	p := New(classes{"gold": class("gold", ptr(true)), "silver": class("silver", ptr(false)), "bronze": class("bronze", nil)})
	const (
		noResize = `persistentvolumeclaims "foo" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`
		notBound = `persistentvolumeclaims "foo" is forbidden: Only bound persistent volume claims can be expanded`
	)
	bound, pending := corev1.ClaimBound, corev1.ClaimPending
	gold, silver := ptr("gold"), ptr("silver")
	update := func(obj, old *corev1.PersistentVolumeClaim) *admission.Attributes {
		return admissiontest.Update(obj, old).Attributes()
	}
	admissiontest.Run(t, p, []admissiontest.Case{
		{Name: "grow with expandable class", Attributes: update(claim("2Gi", gold, bound), claim("1Gi", gold, bound))},
		{Name: "grow without class", Attributes: update(claim("2Gi", nil, bound), claim("1Gi", nil, bound)), WantErr: noResize, WantCode: 403},
		{Name: "grow with class that refuses", Attributes: update(claim("2Gi", silver, bound), claim("1Gi", silver, bound)), WantErr: noResize, WantCode: 403},
		{Name: "grow with class that does not say", Attributes: update(claim("2Gi", ptr("bronze"), bound), claim("1Gi", ptr("bronze"), bound)), WantErr: noResize},
		{Name: "grow with missing class", Attributes: update(claim("2Gi", ptr("tin"), bound), claim("1Gi", ptr("tin"), bound)), WantErr: noResize},
		{Name: "grow while changing class", Attributes: update(claim("2Gi", gold, bound), claim("1Gi", silver, bound)), WantErr: noResize},
		{Name: "grow with empty class", Attributes: update(claim("2Gi", ptr(""), bound), claim("1Gi", ptr(""), bound)), WantErr: noResize},
		{Name: "annotation wins over field", Attributes: update(annotated(claim("2Gi", silver, bound), "gold"), annotated(claim("1Gi", silver, bound), "gold"))},
		{Name: "empty annotation wins over field", Attributes: update(annotated(claim("2Gi", gold, bound), ""), annotated(claim("1Gi", gold, bound), "")), WantErr: noResize},
		{Name: "same size, pending", Attributes: update(claim("1Gi", silver, pending), claim("1Gi", silver, bound))},
		{Name: "same size written differently", Attributes: update(claim("1024Mi", silver, bound), claim("1Gi", silver, bound))},
		{Name: "shrink", Attributes: update(claim("1Gi", silver, bound), claim("2Gi", silver, bound))},
		{Name: "grow from no request", Attributes: update(claim("1Gi", silver, bound), claim("", silver, bound)), WantErr: noResize},
		{Name: "drop the request", Attributes: update(claim("", silver, bound), claim("1Gi", silver, bound))},
		{Name: "grow pending claim", Attributes: update(claim("2Gi", gold, pending), claim("1Gi", gold, pending)), WantErr: notBound, WantCode: 403},
		{Name: "grow claim bound only now", Attributes: update(claim("2Gi", gold, bound), claim("1Gi", gold, pending)), WantErr: notBound},
		{Name: "status subresource", Attributes: admissiontest.Update(claim("2Gi", silver, bound), claim("1Gi", silver, bound)).
			Resource(corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), "status").Attributes()},
		{Name: "create", Attributes: admissiontest.Create(claim("2Gi", silver, bound)).Attributes()},
	})
}
