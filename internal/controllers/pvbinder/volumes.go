package pvbinder

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// syncVolume brings a volume's phase in line with its claim: Available
// while free or only pre-bound, Bound while its claim is bound to it,
// Released (and reclaimed) once its claim is gone; a volume the
// controller bound to a claim that went to another volume is unbound.
func (c *Controller) syncVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	volume, err := c.updateVolumeMigrationAnnotationsAndFinalizers(ctx, volume)
	if err != nil {
		return err
	}
	if volume.Spec.ClaimRef == nil || volume.Spec.ClaimRef.UID == "" {
		_, err := c.updateVolumePhase(ctx, volume, corev1.VolumeAvailable, "")
		return err
	}
	claim, err := c.boundClaim(ctx, volume)
	if err != nil {
		return err
	}
	switch {
	case claim == nil:
		return c.releaseVolume(ctx, volume)
	case claim.Spec.VolumeName == "":
		return c.volumeBoundToUnboundClaim(volume, claim)
	case claim.Spec.VolumeName == volume.Name:
		_, err := c.updateVolumePhase(ctx, volume, corev1.VolumeBound, "")
		return err
	}
	// the claim is bound to another volume
	if metav1.HasAnnotation(volume.ObjectMeta, storagehelpers.AnnDynamicallyProvisioned) && volume.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete {
		return c.releaseVolume(ctx, volume)
	}
	return c.unbindVolume(ctx, volume)
}

// boundClaim is the claim the volume's claimRef names, nil when it is
// gone (or replaced by a claim of the same name and another UID). A claim
// missing from the cache is asked of the server before the volume is
// called released, as the cache may not have it yet.
func (c *Controller) boundClaim(ctx context.Context, volume *corev1.PersistentVolume) (*corev1.PersistentVolumeClaim, error) {
	ref := volume.Spec.ClaimRef
	claim, found := c.claims.Get(ref.Namespace, ref.Name)
	releasedAlready := volume.Status.Phase == corev1.VolumeReleased || volume.Status.Phase == corev1.VolumeFailed
	if (!found && !releasedAlready) || (found && claim.UID != ref.UID) {
		fresh, err := c.client.CoreV1().PersistentVolumeClaims(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, err
		}
		claim, found = fresh, true
	}
	if !found || claim.UID != ref.UID {
		return nil, nil
	}
	return claim, nil
}

// volumeBoundToUnboundClaim handles a volume whose claim does not name it
// yet: the claim's sync finishes the binding, unless the volume modes
// differ.
func (c *Controller) volumeBoundToUnboundClaim(volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	if storagehelpers.CheckVolumeModeMismatches(&claim.Spec, &volume.Spec) {
		c.recorder.Event(volume, corev1.EventTypeWarning, reasonVolumeMismatch,
			fmt.Sprintf("Cannot bind PersistentVolume to requested PersistentVolumeClaim %q due to incompatible volumeMode.", claim.Name))
		c.recorder.Event(claim, corev1.EventTypeWarning, reasonVolumeMismatch,
			fmt.Sprintf("Cannot bind PersistentVolume %q to requested PersistentVolumeClaim due to incompatible volumeMode.", volume.Name))
		return nil
	}
	c.claimQueue.Add(claimKey(claim))
	return nil
}

// releaseVolume makes a volume whose claim is gone Released, then
// reclaims it.
func (c *Controller) releaseVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	if volume.Status.Phase != corev1.VolumeReleased && volume.Status.Phase != corev1.VolumeFailed {
		var err error
		if volume, err = c.updateVolumePhase(ctx, volume, corev1.VolumeReleased, ""); err != nil {
			return err
		}
	}
	return c.reclaimVolume(ctx, volume)
}
