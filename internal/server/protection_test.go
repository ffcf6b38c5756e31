package server

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A namespace holding a claim finishes deleting: admission gives the claim
// the pvc-protection finalizer, and the pvc-protection controller (allowed
// by the bootstrap RBAC policy) removes it once the claim is deleted.
func TestNamespaceWithClaimIsDeleted(t *testing.T) {
	_, admin := startRBAC(t)
	c := kubernetes.NewForConfigOrDie(admin)
	ctx := t.Context()
	mustCreateNamespace(t, c, "team")
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	got, err := c.CoreV1().PersistentVolumeClaims("team").Create(ctx, pvc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.Finalizers, "kubernetes.io/pvc-protection") {
		t.Errorf("created claim has finalizers %q, want kubernetes.io/pvc-protection", got.Finalizers)
	}
	if err := c.CoreV1().Namespaces().Delete(ctx, "team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := c.CoreV1().Namespaces().Get(ctx, "team", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET the deleted namespace after 5s: %v, want it gone", err)
		}
	}
}
