package pvbinder

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// migratedDrivers are the in-tree provisioners whose volumes CSI
// migration (on for all of them in 1.37) hands to a CSI driver, and the
// driver of each.
var migratedDrivers = map[string]string{
	"kubernetes.io/aws-ebs":         "ebs.csi.aws.com",
	"kubernetes.io/gce-pd":          "pd.csi.storage.gke.io",
	"kubernetes.io/azure-file":      "file.csi.azure.com",
	"kubernetes.io/azure-disk":      "disk.csi.azure.com",
	"kubernetes.io/cinder":          "cinder.csi.openstack.org",
	"kubernetes.io/vsphere-volume":  "csi.vsphere.vmware.com",
	"kubernetes.io/portworx-volume": "pxd.portworx.com",
}

// updateMigrationAnnotations sets the pv.kubernetes.io/migrated-to
// annotation of a claim (claim) or volume to the CSI driver its
// provisioner migrated to, or removes it when the provisioner did not
// migrate, saying whether ann changed.
func updateMigrationAnnotations(ann map[string]string, claim bool) bool {
	if ann == nil {
		return false
	}
	var provisioner string
	var ok bool
	if claim {
		if provisioner, ok = ann[storagehelpers.AnnStorageProvisioner]; !ok {
			provisioner, ok = ann[storagehelpers.AnnBetaStorageProvisioner]
		}
	} else {
		provisioner, ok = ann[storagehelpers.AnnDynamicallyProvisioned]
	}
	if !ok {
		return false
	}
	current := ann[storagehelpers.AnnMigratedTo]
	if driver, migrated := migratedDrivers[provisioner]; migrated {
		if current != driver {
			ann[storagehelpers.AnnMigratedTo] = driver
			return true
		}
		return false
	}
	if current != "" {
		delete(ann, storagehelpers.AnnMigratedTo)
		return true
	}
	return false
}

// updateClaimMigrationAnnotations brings the claim's migrated-to
// annotation in line with its provisioner.
func (c *Controller) updateClaimMigrationAnnotations(ctx context.Context, claim *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	clone := claim.DeepCopy()
	if !updateMigrationAnnotations(clone.Annotations, true) {
		return claim, nil
	}
	updated, err := c.client.CoreV1().PersistentVolumeClaims(clone.Namespace).Update(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("persistent Volume Controller can't anneal migration annotations: %v", err)
	}
	return updated, nil
}

// updateVolumeMigrationAnnotationsAndFinalizers brings the volume's
// migrated-to annotation in line with its provisioner, and its deletion
// finalizers with its provisioner and reclaim policy.
func (c *Controller) updateVolumeMigrationAnnotationsAndFinalizers(ctx context.Context, volume *corev1.PersistentVolume) (*corev1.PersistentVolume, error) {
	clone := volume.DeepCopy()
	annChanged := updateMigrationAnnotations(clone.Annotations, false)
	finalizers, finChanged := deletionFinalizers(clone)
	if !annChanged && !finChanged {
		return volume, nil
	}
	clone.Finalizers = finalizers
	updated, err := c.client.CoreV1().PersistentVolumes().Update(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("persistent Volume Controller can't anneal migration annotations or finalizer: %v", err)
	}
	return updated, nil
}

// deletionFinalizers are the finalizers a dynamically provisioned volume
// should have: kubernetes.io/pv-controller while an in-tree plugin that
// did not migrate is to delete it (policy Delete), none of the external
// provisioner's once such a plugin made it; saying whether they changed.
func deletionFinalizers(volume *corev1.PersistentVolume) ([]string, bool) {
	provisioner, ok := volume.Annotations[storagehelpers.AnnDynamicallyProvisioned]
	if !ok {
		return volume.Finalizers, false
	}
	out := slices.Clone(volume.Finalizers)
	inTree := storagehelpers.PVDeletionInTreeProtectionFinalizer
	without := func(fs []string, f string) []string {
		return slices.DeleteFunc(fs, func(s string) bool { return s == f })
	}
	if _, migrated := migratedDrivers[provisioner]; migrated {
		if slices.Contains(out, inTree) {
			return without(out, inTree), true
		}
		return out, false
	}
	if !strings.HasPrefix(provisioner, "kubernetes.io/") {
		return volume.Finalizers, false
	}
	changed := false
	switch policy := volume.Spec.PersistentVolumeReclaimPolicy; {
	case policy == corev1.PersistentVolumeReclaimDelete && !slices.Contains(out, inTree):
		out, changed = append(out, inTree), true
	case (policy == corev1.PersistentVolumeReclaimRetain || policy == corev1.PersistentVolumeReclaimRecycle) && slices.Contains(out, inTree):
		out, changed = without(out, inTree), true
	}
	if slices.Contains(out, storagehelpers.PVDeletionProtectionFinalizer) {
		out, changed = without(out, storagehelpers.PVDeletionProtectionFinalizer), true
	}
	return out, changed
}
