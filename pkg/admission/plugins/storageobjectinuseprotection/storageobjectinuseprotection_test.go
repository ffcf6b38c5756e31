package storageobjectinuseprotection

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagev1beta1 "k8s.io/api/storage/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

func objMeta(finalizers ...string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: "o", Namespace: "ns", Finalizers: finalizers}
}

func pv(f ...string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: objMeta(f...)}
}
func pvc(f ...string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: objMeta(f...)}
}
func vac(f ...string) *storagev1.VolumeAttributesClass {
	return &storagev1.VolumeAttributesClass{ObjectMeta: objMeta(f...), DriverName: "d"}
}
func vacBeta(f ...string) *storagev1beta1.VolumeAttributesClass {
	return &storagev1beta1.VolumeAttributesClass{ObjectMeta: objMeta(f...), DriverName: "d"}
}

func TestAdmit(t *testing.T) {
	const other = "example.com/other"
	pvcs := corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	admissiontest.Run(t, New(), []admissiontest.Case{
		{Name: "pv gets finalizer", Attributes: admissiontest.Create(pv()).Attributes(), WantObject: pv(PVProtectionFinalizer)},
		{Name: "pv keeps finalizer", Attributes: admissiontest.Create(pv(PVProtectionFinalizer)).Attributes(), WantObject: pv(PVProtectionFinalizer)},
		{Name: "pv with other finalizer", Attributes: admissiontest.Create(pv(other)).Attributes(), WantObject: pv(other, PVProtectionFinalizer)},
		{Name: "pvc gets finalizer", Attributes: admissiontest.Create(pvc()).Attributes(), WantObject: pvc(PVCProtectionFinalizer)},
		{Name: "pvc keeps finalizer", Attributes: admissiontest.Create(pvc(PVCProtectionFinalizer)).Attributes(), WantObject: pvc(PVCProtectionFinalizer)},
		{Name: "pvc with pv finalizer", Attributes: admissiontest.Create(pvc(PVProtectionFinalizer)).Attributes(),
			WantObject: pvc(PVProtectionFinalizer, PVCProtectionFinalizer)},
		{Name: "vac gets finalizer", Attributes: admissiontest.Create(vac()).Attributes(), WantObject: vac(VACProtectionFinalizer)},
		{Name: "v1beta1 vac gets finalizer", Attributes: admissiontest.Create(vacBeta(other)).Attributes(),
			WantObject: vacBeta(other, VACProtectionFinalizer)},
		{Name: "pvc update untouched", Attributes: admissiontest.Update(pvc(), pvc()).Attributes(), WantObject: pvc()},
		{Name: "pvc subresource untouched", Attributes: admissiontest.Create(pvc()).Resource(pvcs, "status").Attributes(), WantObject: pvc()},
		{Name: "not a claim under claims", Attributes: admissiontest.Create(pv()).Resource(pvcs, "").Attributes(), WantObject: pv()},
		{Name: "other kind untouched", Attributes: admissiontest.Create(&corev1.ConfigMap{ObjectMeta: objMeta()}).Attributes(),
			WantObject: &corev1.ConfigMap{ObjectMeta: objMeta()}},
	})
}
