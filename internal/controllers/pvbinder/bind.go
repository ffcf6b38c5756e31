package pvbinder

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// bind writes the binding of volume and claim, in upstream's order: the
// volume's claimRef, its phase Bound, the claim's volumeName and
// annotations, its status Bound. Each step is skipped when already done,
// so a binding interrupted half way is finished by the next sync.
func (c *Controller) bind(ctx context.Context, volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	volume, err := c.bindVolumeToClaim(ctx, volume, claim)
	if err != nil {
		return err
	}
	if volume, err = c.updateVolumePhase(ctx, volume, corev1.VolumeBound, ""); err != nil {
		return err
	}
	if claim, err = c.bindClaimToVolume(ctx, claim, volume); err != nil {
		return err
	}
	_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimBound, volume)
	return err
}

// bindVolumeToClaim points the volume's claimRef at claim (with its UID),
// annotated bound-by-controller unless the user pre-bound it.
func (c *Controller) bindVolumeToClaim(ctx context.Context, volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) (*corev1.PersistentVolume, error) {
	clone, dirty, err := storagehelpers.GetBindVolumeToClaim(volume, claim)
	if err != nil || !dirty {
		return volume, err
	}
	updated, err := c.client.CoreV1().PersistentVolumes().Update(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	c.log.Debug("claim bound to volume", "claim", claimKey(claim), "volume", volume.Name)
	return updated, nil
}

// bindClaimToVolume sets the claim's volumeName (annotated
// bound-by-controller when the controller chose it) and its
// bind-completed annotation.
func (c *Controller) bindClaimToVolume(ctx context.Context, claim *corev1.PersistentVolumeClaim, volume *corev1.PersistentVolume) (*corev1.PersistentVolumeClaim, error) {
	clone := claim.DeepCopy()
	dirty := false
	if clone.Spec.VolumeName != volume.Name {
		clone.Spec.VolumeName = volume.Name
		if !metav1.HasAnnotation(clone.ObjectMeta, storagehelpers.AnnBoundByController) {
			metav1.SetMetaDataAnnotation(&clone.ObjectMeta, storagehelpers.AnnBoundByController, "yes")
		}
		dirty = true
	}
	if !metav1.HasAnnotation(clone.ObjectMeta, storagehelpers.AnnBindCompleted) {
		metav1.SetMetaDataAnnotation(&clone.ObjectMeta, storagehelpers.AnnBindCompleted, "yes")
		dirty = true
	}
	if !dirty {
		return claim, nil
	}
	updated, err := c.client.CoreV1().PersistentVolumeClaims(clone.Namespace).Update(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	c.log.Debug("volume bound to claim", "claim", claimKey(claim), "volume", volume.Name)
	return updated, nil
}

// unbindVolume undoes the controller's binding of volume (its claimRef
// and annotation; only the claimRef's UID when the user pre-bound it) and
// makes it Available.
func (c *Controller) unbindVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	clone := volume.DeepCopy()
	if metav1.HasAnnotation(volume.ObjectMeta, storagehelpers.AnnBoundByController) {
		clone.Spec.ClaimRef = nil
		delete(clone.Annotations, storagehelpers.AnnBoundByController)
		if len(clone.Annotations) == 0 {
			clone.Annotations = nil
		}
	} else {
		clone.Spec.ClaimRef.UID = ""
	}
	updated, err := c.client.CoreV1().PersistentVolumes().Update(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	_, err = c.updateVolumePhase(ctx, updated, corev1.VolumeAvailable, "")
	return err
}
