package pvbinder

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// Classes match by name, a claim without storageClassName counting as
// class "": it binds a volume of no class, a claim of a class one of that
// class (before any provisioning), and the beta annotation names a
// claim's class before spec.storageClassName does.
func TestClassMatching(t *testing.T) {
	e := start(t)
	e.createClass("gold", "csi.example.com", storagev1.VolumeBindingImmediate, nil)
	e.createVolumes(
		volume("plain", "1Gi", rwo),
		volume("gold-1", "1Gi", rwo, func(v *corev1.PersistentVolume) { v.Spec.StorageClassName = "gold" }),
		volume("silver-1", "1Gi", rwo, func(v *corev1.PersistentVolume) { v.Spec.StorageClassName = "silver" }),
	)
	e.createClaim(claim("classless", "1Gi", rwo, func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = nil }))
	if _, v := e.waitBound("classless"); v.Name != "plain" {
		t.Fatalf("claim without class bound to %s, want plain", v.Name)
	}
	e.createClaim(claim("golden", "1Gi", rwo, ofClass("gold")))
	c, v := e.waitBound("golden")
	if v.Name != "gold-1" {
		t.Fatalf("claim of class gold bound to %s", v.Name)
	}
	if hasAnnotation(c, storagehelpers.AnnStorageProvisioner) {
		t.Fatalf("a claim bound statically was handed to the provisioner: %v", c.Annotations)
	}
	e.createClaim(claim("annotated", "1Gi", rwo, func(c *corev1.PersistentVolumeClaim) {
		c.Spec.StorageClassName = nil
		c.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "silver"}
	}))
	if _, v := e.waitBound("annotated"); v.Name != "silver-1" {
		t.Fatalf("claim annotated with class silver bound to %s", v.Name)
	}
}

// A claim naming a volume bound to another claim gets FailedBinding and
// stays Pending; a claim and a volume pre-bound to each other with other
// volume modes get VolumeMismatch.
func TestConflictingPreBinding(t *testing.T) {
	e := start(t)
	e.createVolumes(volume("taken", "1Gi", rwo))
	e.createClaim(claim("first", "1Gi", rwo))
	e.waitBound("first")
	e.createClaim(claim("second", "1Gi", rwo, func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "taken" }))
	e.waitEvent(ns, "PersistentVolumeClaim", "second", "FailedBinding", `volume "taken" already bound to a different claim.`)
	if c := e.getClaim("second"); c.Status.Phase != corev1.ClaimPending {
		t.Fatalf("second claim %s", c.Status.Phase)
	}

	block := corev1.PersistentVolumeBlock
	blockClaim := e.createClaim(claim("block", "1Gi", rwo, func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeMode = &block }))
	v := volume("filesystem", "1Gi", rwo, func(v *corev1.PersistentVolume) {
		v.Spec.ClaimRef = &corev1.ObjectReference{Namespace: ns, Name: "block", UID: blockClaim.UID}
	})
	if _, err := e.admin.CoreV1().PersistentVolumes().Create(ctx, v, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitEvent("", "PersistentVolume", "filesystem", "VolumeMismatch", `Cannot bind PersistentVolume to requested PersistentVolumeClaim "block" due to incompatible volumeMode.`)
	e.waitEvent(ns, "PersistentVolumeClaim", "block", "VolumeMismatch", `Cannot bind PersistentVolume "filesystem" to requested PersistentVolumeClaim due to incompatible volumeMode.`)
}

// A claim of a class whose provisioner is an in-tree one that
// kube-controller-manager does not have gets ProvisioningFailed.
func TestInTreeProvisionerMissing(t *testing.T) {
	e := start(t)
	e.createClass("local", "kubernetes.io/no-provisioner", storagev1.VolumeBindingImmediate, nil)
	e.createClass("hostpath", "kubernetes.io/host-path", storagev1.VolumeBindingImmediate, nil)
	e.createClaim(claim("local", "1Gi", rwo, ofClass("local")))
	e.createClaim(claim("hostpath", "1Gi", rwo, ofClass("hostpath")))
	e.waitEvent(ns, "PersistentVolumeClaim", "local", "ProvisioningFailed", "no volume plugin matched name: kubernetes.io/no-provisioner")
	e.waitEvent(ns, "PersistentVolumeClaim", "hostpath", "ProvisioningFailed", `Failed to create provisioner: provisioning in volume plugin "kubernetes.io/host-path" is disabled`)
	e.waitProvisioner("hostpath", "kubernetes.io/host-path")
}
