package pvbinder

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/admitd/admitd/internal/controllers"
)

// The reasons of the controller's events (upstream's
// pkg/controller/volume/events).
const (
	reasonFailedBinding        = "FailedBinding"
	reasonVolumeMismatch       = "VolumeMismatch"
	reasonVolumeFailedRecycle  = "VolumeFailedRecycle"
	reasonVolumeFailedDelete   = "VolumeFailedDelete"
	reasonExternalProvisioning = "ExternalProvisioning"
	reasonProvisioningFailed   = "ProvisioningFailed"
	reasonWaitForFirstConsumer = "WaitForFirstConsumer"
	reasonWaitForPodScheduled  = "WaitForPodScheduled"
)

// syncClaim brings a claim and its binding in line: one whose binding has
// not completed is bound, one bound is checked.
func (c *Controller) syncClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	claim, err := c.updateClaimMigrationAnnotations(ctx, claim)
	if err != nil {
		return err
	}
	if !metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBindCompleted) {
		return c.syncUnboundClaim(ctx, claim)
	}
	return c.syncBoundClaim(ctx, claim)
}

// syncUnboundClaim binds a claim whose binding has not completed.
func (c *Controller) syncUnboundClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName == "" {
		return c.syncClaimWithoutVolume(ctx, claim)
	}
	return c.syncClaimNamingVolume(ctx, claim)
}

// syncClaimWithoutVolume binds a claim to the volume that fits it best, or
// when none does gives it the default class, hands it to its class's
// provisioner or says why it waits.
func (c *Controller) syncClaimWithoutVolume(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	delayBinding, err := c.isDelayBindingMode(claim)
	if err != nil {
		return err
	}
	volume, err := c.findBestMatch(claim, delayBinding)
	if err != nil {
		return fmt.Errorf("error finding PV for claim %q: %w", claimKey(claim), err)
	}
	if volume != nil {
		return c.bind(ctx, volume, claim)
	}
	updated, err := c.assignDefaultStorageClass(ctx, claim)
	if err != nil {
		c.metrics.retroactiveAssignment(true)
		return fmt.Errorf("can't update PersistentVolumeClaim[%q]: %w", claimKey(claim), err)
	}
	if updated {
		// the update queues the claim again
		c.metrics.retroactiveAssignment(false)
		return nil
	}
	switch {
	case delayBinding && !storagehelpers.IsDelayBindingProvisioning(claim):
		c.eventForDelayBindingClaim(claim)
	case storagehelpers.GetPersistentVolumeClaimClass(claim) != "":
		return c.provisionClaim(ctx, claim)
	default:
		c.recorder.Event(claim, corev1.EventTypeNormal, reasonFailedBinding, "no persistent volumes available for this claim and no storage class is set")
	}
	_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
	return err
}

// eventForDelayBindingClaim records why a WaitForFirstConsumer claim
// waits: for a pod that uses it to be scheduled, or for one at all.
func (c *Controller) eventForDelayBindingClaim(claim *corev1.PersistentVolumeClaim) {
	var waiting []string
	for _, pod := range controllers.PodsUsingClaim(c.pods, claim.Namespace, claim.Name) {
		if !podTerminated(pod) && pod.Spec.NodeName == "" {
			waiting = append(waiting, pod.Name)
		}
	}
	switch len(waiting) {
	case 0:
		c.recorder.Event(claim, corev1.EventTypeNormal, reasonWaitForFirstConsumer, "waiting for first consumer to be created before binding")
	case 1:
		c.recorder.Event(claim, corev1.EventTypeNormal, reasonWaitForPodScheduled, fmt.Sprintf("waiting for pod %s to be scheduled", waiting[0]))
	default:
		c.recorder.Event(claim, corev1.EventTypeNormal, reasonWaitForPodScheduled, fmt.Sprintf("waiting for pods %s to be scheduled", strings.Join(waiting, ",")))
	}
}

// syncClaimNamingVolume binds a claim to the volume its spec.volumeName
// names, when that volume is free (or bound to it) and fits.
func (c *Controller) syncClaimNamingVolume(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	volume, ok := c.volumes.Get("", claim.Spec.VolumeName)
	switch {
	case !ok:
		// the volume may come later
		_, err := c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
		return err
	case volume.Spec.ClaimRef == nil:
		if err := checkVolumeSatisfyClaim(volume, claim); err != nil {
			c.recorder.Event(claim, corev1.EventTypeWarning, reasonVolumeMismatch, fmt.Sprintf("Cannot bind to requested volume %q: %s", volume.Name, err))
			_, err = c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
			return err
		}
		return c.bind(ctx, volume, claim)
	case storagehelpers.IsVolumeBoundToClaim(volume, claim):
		return c.bind(ctx, volume, claim)
	}
	c.recorder.Event(claim, corev1.EventTypeWarning, reasonFailedBinding, fmt.Sprintf("volume %q already bound to a different claim.", volume.Name))
	if metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBoundByController) {
		// the controller bound the claim to a volume another claim holds
		return fmt.Errorf("invalid binding of claim %q to volume %q: volume already claimed by %q", claimKey(claim), claim.Spec.VolumeName, claimRefKey(volume.Spec.ClaimRef))
	}
	_, err := c.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
	return err
}

// syncBoundClaim checks a claim whose binding completed: it is Lost when
// its volume is gone or bound to another claim, and the binding is
// finished or repaired otherwise.
func (c *Controller) syncBoundClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName == "" {
		_, err := c.updateClaimStatusWithEvent(ctx, claim, corev1.ClaimLost, nil, corev1.EventTypeWarning, "ClaimLost", "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
		return err
	}
	volume, ok := c.volumes.Get("", claim.Spec.VolumeName)
	switch {
	case !ok:
		_, err := c.updateClaimStatusWithEvent(ctx, claim, corev1.ClaimLost, nil, corev1.EventTypeWarning, "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
		return err
	case volume.Spec.ClaimRef == nil, volume.Spec.ClaimRef.UID == claim.UID:
		return c.bind(ctx, volume, claim)
	}
	_, err := c.updateClaimStatusWithEvent(ctx, claim, corev1.ClaimLost, nil, corev1.EventTypeWarning, "ClaimMisbound", "Two claims are bound to the same volume, this one is bound incorrectly")
	return err
}
