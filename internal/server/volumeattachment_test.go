package server

import (
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// A kubelet reads the VolumeAttachments of its node (the Node authorizer
// learns them from the store) and no other; the refusal is upstream's
// (recorded from kube-apiserver 1.37.2).
func TestNodeReadsItsVolumeAttachment(t *testing.T) {
	_, admin := startNodeRestriction(t)
	ctx := t.Context()
	c := kubernetes.NewForConfigOrDie(admin)
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va-1"}, Spec: storagev1.VolumeAttachmentSpec{
		Attacher: "disk.csi.example.com", NodeName: "n1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-1")}}}
	if _, err := c.StorageV1().VolumeAttachments().Create(ctx, va, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := asNode(admin, "n1").StorageV1().VolumeAttachments().Get(ctx, "va-1", metav1.GetOptions{})
	if err != nil || got.Spec.NodeName != "n1" {
		t.Errorf("node reading its volume attachment: %v, %+v", err, got)
	}
	_, err = asNode(admin, "n2").StorageV1().VolumeAttachments().Get(ctx, "va-1", metav1.GetOptions{})
	want := `volumeattachments.storage.k8s.io "va-1" is forbidden: User "system:node:n2" cannot get resource "volumeattachments" in API group ` +
		`"storage.k8s.io" at the cluster scope: node: no relationship found between node 'n2' and this object`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("node reading another node's volume attachment: %v, want %s", err, want)
	}
	got.Status.Attached = true
	if _, err := c.StorageV1().VolumeAttachments().UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Errorf("attacher marking it attached: %v", err)
	}
}
