package pvbinder

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

// bindAndDelete binds a claim to the volume, then deletes the claim.
func (e *env) bindAndDelete(v *corev1.PersistentVolume) {
	e.t.Helper()
	e.createVolumes(v)
	e.createClaim(claim("claim-"+v.Name, "1Gi", rwo, func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = v.Name }))
	e.waitBound("claim-" + v.Name)
	if err := e.admin.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "claim-"+v.Name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func withPolicy(p corev1.PersistentVolumeReclaimPolicy) func(*corev1.PersistentVolume) {
	return func(v *corev1.PersistentVolume) { v.Spec.PersistentVolumeReclaimPolicy = p }
}

// A volume of policy Retain whose claim is deleted is Released and kept,
// still naming the claim.
func TestReleaseRetain(t *testing.T) {
	e := start(t)
	e.bindAndDelete(volume("kept", "1Gi", rwo))
	v := e.waitVolumePhase("kept", corev1.VolumeReleased)
	if v.Spec.ClaimRef == nil || v.Spec.ClaimRef.Name != "claim-kept" {
		t.Fatalf("released volume's claimRef %+v", v.Spec.ClaimRef)
	}
	e.stays("retained volume released", func() (bool, string) {
		v := e.getVolume("kept")
		return v.Status.Phase == corev1.VolumeReleased, string(v.Status.Phase)
	})
}

// A volume of policy Delete that no plugin of kube-controller-manager
// deletes fails with upstream's VolumeFailedDelete event; one an external
// provisioner made (or a CSI one) is left Released for its deleter; a
// host path volume under /tmp is deleted.
func TestReleaseDelete(t *testing.T) {
	e := start(t)
	e.bindAndDelete(volume("hostpath", "1Gi", rwo, withPolicy(corev1.PersistentVolumeReclaimDelete)))
	e.bindAndDelete(volume("nfs", "1Gi", rwo, withPolicy(corev1.PersistentVolumeReclaimDelete), func(v *corev1.PersistentVolume) {
		v.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example.com", Path: "/export"}}
	}))
	e.bindAndDelete(volume("local", "1Gi", rwo, withPolicy(corev1.PersistentVolumeReclaimDelete), func(v *corev1.PersistentVolume) {
		v.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disk"}}
		v.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}}}}}
	}))
	e.bindAndDelete(volume("external", "1Gi", rwo, withPolicy(corev1.PersistentVolumeReclaimDelete), func(v *corev1.PersistentVolume) {
		v.Annotations = map[string]string{storagehelpers.AnnDynamicallyProvisioned: "example.com/provisioner"}
	}))
	e.bindAndDelete(volume("csi", "1Gi", rwo, withPolicy(corev1.PersistentVolumeReclaimDelete), func(v *corev1.PersistentVolume) {
		v.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: "h"}}
	}))
	e.bindAndDelete(volume("scratch", "1Gi", rwo, withPolicy(corev1.PersistentVolumeReclaimDelete), func(v *corev1.PersistentVolume) {
		v.Spec.HostPath.Path = "/tmp/scratch"
	}))

	for name, message := range map[string]string{
		"hostpath": "host_path deleter only supports /tmp/.+ but received provided /data/hostpath",
		"nfs":      `error getting deleter volume plugin for volume "nfs": no deletable volume plugin matched`,
		"local":    `error getting deleter volume plugin for volume "local": no volume plugin matched`,
	} {
		v := e.waitVolumePhase(name, corev1.VolumeFailed)
		if v.Status.Message != message {
			t.Errorf("%s: status message %q, want %q", name, v.Status.Message, message)
		}
		e.waitEvent("", "PersistentVolume", name, "VolumeFailedDelete", message)
	}
	e.waitVolumePhase("external", corev1.VolumeReleased)
	e.waitVolumePhase("csi", corev1.VolumeReleased)
	controllertest.Eventually(t, 10*time.Second, "/tmp host path volume deleted", func() (bool, string) {
		_, err := e.admin.CoreV1().PersistentVolumes().Get(ctx, "scratch", metav1.GetOptions{})
		return err != nil, "still there"
	})
	e.stays("external and CSI volumes left released", func() (bool, string) {
		for _, name := range []string{"external", "csi"} {
			if v := e.getVolume(name); v.Status.Phase != corev1.VolumeReleased {
				return false, name + " is " + string(v.Status.Phase)
			}
		}
		return true, ""
	})
}

// A volume of policy Recycle fails as upstream's does for a volume no
// recycler plugin handles.
func TestReleaseRecycle(t *testing.T) {
	e := start(t)
	e.bindAndDelete(volume("recycled", "1Gi", rwo, withPolicy(corev1.PersistentVolumeReclaimRecycle), func(v *corev1.PersistentVolume) {
		v.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{ISCSI: &corev1.ISCSIPersistentVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: "iqn.2001-04.com.example:storage", Lun: 0}}
	}))
	e.waitVolumePhase("recycled", corev1.VolumeFailed)
	e.waitEvent("", "PersistentVolume", "recycled", "VolumeFailedRecycle", "No recycler plugin found for the volume!")
}
