package pvbinder

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

func ofClass(name string) func(*corev1.PersistentVolumeClaim) {
	return func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = &name }
}

func externalMessage(provisioner string) string {
	return fmt.Sprintf("Waiting for a volume to be created either by the external provisioner '%s' "+
		"or manually by the system administrator. If volume creation is delayed, please verify that "+
		"the provisioner is running and correctly registered.", provisioner)
}

// waitProvisioner waits until the claim names provisioner in both
// storage-provisioner annotations.
func (e *env) waitProvisioner(name, provisioner string) *corev1.PersistentVolumeClaim {
	e.t.Helper()
	var c *corev1.PersistentVolumeClaim
	controllertest.Eventually(e.t, 10*time.Second, name+" handed to "+provisioner, func() (bool, string) {
		c = e.getClaim(name)
		return c.Annotations[storagehelpers.AnnStorageProvisioner] == provisioner &&
			c.Annotations[storagehelpers.AnnBetaStorageProvisioner] == provisioner, fmt.Sprint(c.Annotations)
	})
	return c
}

// A claim of a class whose provisioner is external is annotated with it
// and gets ExternalProvisioning; one of a migrated in-tree provisioner
// names the CSI driver and gets migrated-to; one of a class that does not
// exist gets ProvisioningFailed.
func TestExternalProvisioning(t *testing.T) {
	e := start(t)
	e.createClass("fast", "csi.example.com", storagev1.VolumeBindingImmediate, nil)
	e.createClass("gce", "kubernetes.io/gce-pd", storagev1.VolumeBindingImmediate, nil)
	e.createClaim(claim("ext", "1Gi", rwo, ofClass("fast")))
	e.createClaim(claim("migrated", "1Gi", rwo, ofClass("gce")))
	e.createClaim(claim("nowhere", "1Gi", rwo, ofClass("missing")))

	e.waitProvisioner("ext", "csi.example.com")
	e.waitEvent(ns, "PersistentVolumeClaim", "ext", "ExternalProvisioning", externalMessage("csi.example.com"))
	if c := e.getClaim("ext"); c.Status.Phase != corev1.ClaimPending {
		t.Fatalf("claim phase %s", c.Status.Phase)
	}
	// upstream names the driver, so the claim's provisioner is not an
	// in-tree one and it gets no migrated-to annotation
	c := e.waitProvisioner("migrated", "pd.csi.storage.gke.io")
	if hasAnnotation(c, storagehelpers.AnnMigratedTo) {
		t.Fatalf("migrated claim annotations %v", c.Annotations)
	}
	e.waitEvent(ns, "PersistentVolumeClaim", "nowhere", "ProvisioningFailed", `storageclass.storage.k8s.io "missing" not found`)

	// the external provisioner's volume, pre-bound to the claim, is bound
	ext := e.getClaim("ext")
	provisioned := volume("pvc-"+string(ext.UID), "1Gi", rwo, func(v *corev1.PersistentVolume) {
		v.Spec.StorageClassName = "fast"
		v.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: "ext", UID: ext.UID}
		v.Annotations = map[string]string{storagehelpers.AnnDynamicallyProvisioned: "csi.example.com"}
	})
	if _, err := e.admin.CoreV1().PersistentVolumes().Create(ctx, provisioned, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, v := e.waitBound("ext"); v.Name != "pvc-"+string(ext.UID) {
		t.Fatalf("claim bound to %s", v.Name)
	}
}

// A claim of a WaitForFirstConsumer class is not bound, even to a volume
// that fits, until the scheduler picks a node for it: it says why it
// waits, and is then handed to its provisioner.
func TestWaitForFirstConsumer(t *testing.T) {
	e := start(t)
	e.createClass("local", "csi.example.com", storagev1.VolumeBindingWaitForFirstConsumer, nil)
	e.createVolumes(volume("fits", "1Gi", rwo, func(v *corev1.PersistentVolume) { v.Spec.StorageClassName = "local" }))
	e.createClaim(claim("late", "1Gi", rwo, ofClass("local")))
	e.waitEvent(ns, "PersistentVolumeClaim", "late", "WaitForFirstConsumer", "waiting for first consumer to be created before binding")

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "user", Namespace: ns}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "late"}}}}}}
	if _, err := e.admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitEvent(ns, "PersistentVolumeClaim", "late", "WaitForPodScheduled", "waiting for pod user to be scheduled")
	e.stays("claim unbound, volume available", func() (bool, string) {
		c, v := e.getClaim("late"), e.getVolume("fits")
		return c.Spec.VolumeName == "" && v.Spec.ClaimRef == nil && !hasAnnotation(c, storagehelpers.AnnStorageProvisioner),
			fmt.Sprintf("claim on %q annotated %v, volume claimRef %v", c.Spec.VolumeName, c.Annotations, v.Spec.ClaimRef)
	})

	// the scheduler chose a node: the claim goes to the provisioner
	c := e.getClaim("late")
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagehelpers.AnnSelectedNode, "node-1")
	if _, err := e.admin.CoreV1().PersistentVolumeClaims(ns).Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitProvisioner("late", "csi.example.com")
	e.waitEvent(ns, "PersistentVolumeClaim", "late", "ExternalProvisioning", externalMessage("csi.example.com"))
}

// A claim without storageClassName gets the default class once one
// exists, and is then provisioned; one of class "" keeps it.
func TestRetroactiveDefaultClass(t *testing.T) {
	e := start(t)
	e.createClaim(claim("classless", "1Gi", rwo, func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = nil }))
	e.waitEvent(ns, "PersistentVolumeClaim", "classless", "FailedBinding", "no persistent volumes available for this claim and no storage class is set")
	e.createClass("not-default", "older.example.com", storagev1.VolumeBindingImmediate, map[string]string{annDefaultClass: "false"})
	e.createClass("standard", "csi.example.com", storagev1.VolumeBindingImmediate, map[string]string{annBetaDefaultClass: "true"})
	controllertest.Eventually(t, 10*time.Second, "default class assigned", func() (bool, string) {
		c := e.getClaim("classless")
		if c.Spec.StorageClassName == nil {
			return false, "no class"
		}
		return *c.Spec.StorageClassName == "standard", *c.Spec.StorageClassName
	})
	e.waitProvisioner("classless", "csi.example.com")
	e.waitMetrics(`
# HELP retroactive_storageclass_total [ALPHA] Total number of retroactive StorageClass assignments to persistent volume claim
# TYPE retroactive_storageclass_total counter
retroactive_storageclass_total 1
# HELP retroactive_storageclass_errors_total [ALPHA] Total number of failed retroactive StorageClass assignments to persistent volume claim
# TYPE retroactive_storageclass_errors_total counter
retroactive_storageclass_errors_total 0
`, "retroactive_storageclass_total", "retroactive_storageclass_errors_total")

	// a claim of class "" keeps it
	e.createClaim(claim("explicitly-none", "1Gi", rwo))
	e.waitEvent(ns, "PersistentVolumeClaim", "explicitly-none", "FailedBinding", "no persistent volumes available for this claim and no storage class is set")
	if c := e.getClaim("explicitly-none"); c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != "" {
		t.Fatalf("class %v", c.Spec.StorageClassName)
	}
}
