package pvbinder

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// The annotations that make a StorageClass the default.
const (
	annDefaultClass     = "storageclass.kubernetes.io/is-default-class"
	annBetaDefaultClass = "storageclass.beta.kubernetes.io/is-default-class"
)

// hostPathPlugin is the one in-tree provisioner kube-controller-manager
// has; it provisions only with --enable-hostpath-provisioner, which
// admitd does not have.
const hostPathPlugin = "kubernetes.io/host-path"

// isDelayBindingMode says whether the claim's class binds
// WaitForFirstConsumer (a class that does not exist binds at once).
func (c *Controller) isDelayBindingMode(claim *corev1.PersistentVolumeClaim) (bool, error) {
	name := storagehelpers.GetPersistentVolumeClaimClass(claim)
	if name == "" {
		return false, nil
	}
	class, ok := c.classes.Get("", name)
	if !ok {
		return false, nil
	}
	if class.VolumeBindingMode == nil {
		return false, fmt.Errorf("VolumeBindingMode not set for StorageClass %q", name)
	}
	return *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer, nil
}

// defaultClass is the default StorageClass, the newest when several are
// (then the first by name); nil when none is.
func (c *Controller) defaultClass() *storagev1.StorageClass {
	defaults := c.classes.ListAll(func(sc *storagev1.StorageClass) bool {
		return sc.Annotations[annDefaultClass] == "true" || sc.Annotations[annBetaDefaultClass] == "true"
	})
	slices.SortFunc(defaults, func(a, b *storagev1.StorageClass) int {
		if d := cmp.Compare(b.CreationTimestamp.UnixNano(), a.CreationTimestamp.UnixNano()); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(defaults) == 0 {
		return nil
	}
	return defaults[0]
}

// assignDefaultStorageClass gives a claim without storageClassName (nil,
// not "") the default class, when there is one, saying whether it did.
func (c *Controller) assignDefaultStorageClass(ctx context.Context, claim *corev1.PersistentVolumeClaim) (bool, error) {
	if storagehelpers.PersistentVolumeClaimHasClass(claim) {
		return false, nil
	}
	class := c.defaultClass()
	if class == nil {
		return false, nil
	}
	clone := claim.DeepCopy()
	clone.Spec.StorageClassName = &class.Name
	if _, err := c.client.CoreV1().PersistentVolumeClaims(clone.Namespace).Update(ctx, clone, metav1.UpdateOptions{}); err != nil {
		return false, err
	}
	c.log.Debug("assigned the default storage class to a claim", "claim", claimKey(claim), "class", class.Name)
	return true, nil
}

// provisionClaim hands a claim of a class to the class's provisioner: an
// external one (or the CSI driver an in-tree plugin migrated to) is named
// in the claim's storage-provisioner annotations, with the
// ExternalProvisioning event; an in-tree one fails as upstream's does
// without it.
func (c *Controller) provisionClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	name := storagehelpers.GetPersistentVolumeClaimClass(claim)
	class, ok := c.classes.Get("", name)
	if !ok {
		err := apierrors.NewNotFound(storagev1.Resource("storageclass"), name)
		c.recorder.Event(claim, corev1.EventTypeWarning, reasonProvisioningFailed, err.Error())
		return nil
	}
	provisioner := class.Provisioner
	if driver, migrated := migratedDrivers[provisioner]; migrated {
		provisioner = driver
	} else if strings.HasPrefix(provisioner, "kubernetes.io/") {
		return c.provisionInTree(ctx, claim, class)
	}
	return c.provisionExternal(ctx, claim, provisioner)
}

// provisionExternal names the provisioner in the claim's annotations and
// records that the claim waits for it.
func (c *Controller) provisionExternal(ctx context.Context, claim *corev1.PersistentVolumeClaim, provisioner string) error {
	claim, err := c.setClaimProvisioner(ctx, claim, provisioner)
	if err != nil {
		c.recorder.Event(claim, corev1.EventTypeWarning, reasonProvisioningFailed, fmt.Sprintf("Error saving claim: %v", err))
		return err
	}
	c.recorder.Event(claim, corev1.EventTypeNormal, reasonExternalProvisioning, fmt.Sprintf("Waiting for a volume to be created either by the external provisioner '%s' "+
		"or manually by the system administrator. If volume creation is delayed, please verify that "+
		"the provisioner is running and correctly registered.", provisioner))
	return nil
}

// provisionInTree fails the provisioning of a claim whose class names an
// in-tree provisioner: kube-controller-manager's host path provisioner is
// off by default, and it has no other.
func (c *Controller) provisionInTree(ctx context.Context, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) error {
	if class.Provisioner != hostPathPlugin {
		c.recorder.Event(claim, corev1.EventTypeWarning, reasonProvisioningFailed, "no volume plugin matched name: "+class.Provisioner)
		return nil
	}
	if claim.Spec.DataSource != nil {
		msg := fmt.Sprintf("plugin %q is not a CSI plugin. Only CSI plugin can provision a claim with a datasource", hostPathPlugin)
		c.recorder.Event(claim, corev1.EventTypeWarning, reasonProvisioningFailed, msg)
		return nil
	}
	claim, err := c.setClaimProvisioner(ctx, claim, class.Provisioner)
	if err != nil {
		return err
	}
	if _, err := c.client.CoreV1().PersistentVolumes().Get(ctx, "pvc-"+string(claim.UID), metav1.GetOptions{}); err == nil {
		return nil
	}
	c.recorder.Event(claim, corev1.EventTypeWarning, reasonProvisioningFailed,
		fmt.Sprintf("Failed to create provisioner: provisioning in volume plugin %q is disabled", hostPathPlugin))
	return nil
}

// setClaimProvisioner sets the claim's storage-provisioner annotations
// (and its migrated-to one) to provisioner.
func (c *Controller) setClaimProvisioner(ctx context.Context, claim *corev1.PersistentVolumeClaim, provisioner string) (*corev1.PersistentVolumeClaim, error) {
	if v, ok := claim.Annotations[storagehelpers.AnnStorageProvisioner]; ok && v == provisioner {
		return claim, nil
	}
	clone := claim.DeepCopy()
	metav1.SetMetaDataAnnotation(&clone.ObjectMeta, storagehelpers.AnnBetaStorageProvisioner, provisioner)
	metav1.SetMetaDataAnnotation(&clone.ObjectMeta, storagehelpers.AnnStorageProvisioner, provisioner)
	updateMigrationAnnotations(clone.Annotations, true)
	updated, err := c.client.CoreV1().PersistentVolumeClaims(clone.Namespace).Update(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return claim, err
	}
	return updated, nil
}
