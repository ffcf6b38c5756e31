package server

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// vacState is the finalizers of the VolumeAttributesClass name and
// whether it is being deleted, or "gone".
func vacState(t *testing.T, c kubernetes.Interface, name string) string {
	vac, err := c.StorageV1().VolumeAttributesClasses().Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "gone"
	}
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%q deleting=%t", vac.Finalizers, vac.DeletionTimestamp != nil)
}

// admitd serve adds kubernetes.io/vac-protection to a new
// VolumeAttributesClass (StorageObjectInUseProtection admission, as
// kube-apiserver) and runs kube-controller-manager's
// volumeattributesclass-protection-controller as its service account: a
// deleted class stays while a claim names it and goes with the claim (as
// kube-apiserver + kube-controller-manager 1.37.2 do,
// test/sidebyside-vacprotection.sh). With
// --controllers=-volumeattributesclass-protection-controller it stays.
func TestVACProtectionControllerReleasesUnusedClasses(t *testing.T) {
	const finalizer = "kubernetes.io/vac-protection"
	for _, on := range []bool{true, false} {
		flag := []string{"*"}
		if !on {
			flag = []string{"*", "-volumeattributesclass-protection-controller"}
		}
		c := startWithControllers(t, flag...)
		vac := &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "gold"}, DriverName: "csi.example.com", Parameters: map[string]string{"iops": "100"}}
		if _, err := c.StorageV1().VolumeAttributesClasses().Create(t.Context(), vac, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if got, want := vacState(t, c, "gold"), fmt.Sprintf("[%q] deleting=false", finalizer); got != want {
			t.Fatalf("new class: %s, want %s", got, want)
		}
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				VolumeAttributesClassName: ptr.To("gold"),
				Resources:                 corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
		if _, err := c.CoreV1().PersistentVolumeClaims("default").Create(t.Context(), pvc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := c.StorageV1().VolumeAttributesClasses().Delete(t.Context(), "gold", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		deleting := fmt.Sprintf("[%q] deleting=true", finalizer)
		time.Sleep(300 * time.Millisecond) // what the controller would need to release it
		if got := vacState(t, c, "gold"); got != deleting {
			t.Fatalf("class in use, deleted: %s, want %s", got, deleting)
		}
		if err := c.CoreV1().PersistentVolumeClaims("default").Delete(t.Context(), "data", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the claim gone", func() (bool, string) {
			_, err := c.CoreV1().PersistentVolumeClaims("default").Get(t.Context(), "data", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		want := "gone"
		if !on {
			time.Sleep(time.Second)
			want = deleting
		}
		eventually(t, "the class", func() (bool, string) {
			got := vacState(t, c, "gold")
			return got == want, fmt.Sprintf("controller on %t: %s, want %s", on, got, want)
		})
	}
}
