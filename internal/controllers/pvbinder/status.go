package pvbinder

import (
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// annPreResizeCapacity on a volume is the capacity a claim bound to it
// reports until its file system is resized.
const annPreResizeCapacity = "volume.alpha.kubernetes.io/pre-resize-capacity"

// updateClaimStatus writes the claim's status phase and, from volume
// (nil: none), its access modes, capacity and current volume attributes
// class, when any differs.
func (c *Controller) updateClaimStatus(ctx context.Context, claim *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase, volume *corev1.PersistentVolume) (*corev1.PersistentVolumeClaim, error) {
	clone := claim.DeepCopy()
	dirty, err := claimStatusFor(clone, phase, volume)
	if err != nil || !dirty {
		return claim, err
	}
	updated, err := c.client.CoreV1().PersistentVolumeClaims(clone.Namespace).UpdateStatus(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	c.log.Debug("claim entered phase", "claim", claimKey(claim), "phase", phase)
	return updated, nil
}

// claimStatusFor sets claim's status for phase and volume, saying whether
// it changed.
func claimStatusFor(claim *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase, volume *corev1.PersistentVolume) (bool, error) {
	st := &claim.Status
	dirty := false
	if volume == nil {
		dirty = st.AccessModes != nil || st.Capacity != nil || st.CurrentVolumeAttributesClassName != nil
		st.AccessModes, st.Capacity, st.CurrentVolumeAttributesClassName = nil, nil, nil
	} else {
		if !reflect.DeepEqual(st.AccessModes, volume.Spec.AccessModes) {
			st.AccessModes = volume.Spec.AccessModes
			dirty = true
		}
		if st.Phase != phase {
			changed, err := claimCapacityFor(claim, volume)
			if err != nil {
				return false, err
			}
			dirty = dirty || changed
		}
		if st.Phase == corev1.ClaimPending && phase == corev1.ClaimBound &&
			!reflect.DeepEqual(st.CurrentVolumeAttributesClassName, volume.Spec.VolumeAttributesClassName) {
			st.CurrentVolumeAttributesClassName = volume.Spec.VolumeAttributesClassName
			dirty = true
		}
	}
	if st.Phase != phase {
		st.Phase = phase
		dirty = true
	}
	return dirty, nil
}

// claimCapacityFor sets the claim's status capacity from its volume's (the
// capacity before a pending resize, when the volume notes one).
func claimCapacityFor(claim *corev1.PersistentVolumeClaim, volume *corev1.PersistentVolume) (bool, error) {
	volumeCap, ok := volume.Spec.Capacity[corev1.ResourceStorage]
	if !ok {
		return false, fmt.Errorf("PersistentVolume %q is without a storage capacity", volume.Name)
	}
	if pre, has := volume.Annotations[annPreResizeCapacity]; has {
		qty, err := resource.ParseQuantity(pre)
		if err != nil {
			qty = volumeCap
		}
		if claim.Status.Capacity == nil {
			claim.Status.Capacity = corev1.ResourceList{}
		}
		claim.Status.Capacity[corev1.ResourceStorage] = qty
		return true, nil
	}
	claimCap, ok := claim.Status.Capacity[corev1.ResourceStorage]
	if !ok || volumeCap.Cmp(claimCap) != 0 {
		claim.Status.Capacity = volume.Spec.Capacity
		return true, nil
	}
	return false, nil
}

// updateClaimStatusWithEvent is updateClaimStatus recording an event
// when the phase changes.
func (c *Controller) updateClaimStatusWithEvent(ctx context.Context, claim *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase, volume *corev1.PersistentVolume, eventType, reason, message string) (*corev1.PersistentVolumeClaim, error) {
	if claim.Status.Phase == phase {
		return claim, nil
	}
	updated, err := c.updateClaimStatus(ctx, claim, phase, volume)
	if err != nil {
		return nil, err
	}
	c.recorder.Event(updated, eventType, reason, message)
	return updated, nil
}

// updateVolumePhase writes the volume's status phase and message when the
// phase differs (the server sets lastPhaseTransitionTime).
func (c *Controller) updateVolumePhase(ctx context.Context, volume *corev1.PersistentVolume, phase corev1.PersistentVolumePhase, message string) (*corev1.PersistentVolume, error) {
	if volume.Status.Phase == phase {
		return volume, nil
	}
	clone := volume.DeepCopy()
	clone.Status.Phase, clone.Status.Message = phase, message
	updated, err := c.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	c.log.Debug("volume entered phase", "volume", volume.Name, "phase", phase)
	return updated, nil
}

// updateVolumePhaseWithEvent is updateVolumePhase recording an event when
// the phase changes.
func (c *Controller) updateVolumePhaseWithEvent(ctx context.Context, volume *corev1.PersistentVolume, phase corev1.PersistentVolumePhase, eventType, reason, message string) (*corev1.PersistentVolume, error) {
	if volume.Status.Phase == phase {
		return volume, nil
	}
	updated, err := c.updateVolumePhase(ctx, volume, phase, message)
	if err != nil {
		return nil, err
	}
	c.recorder.Event(updated, eventType, reason, message)
	return updated, nil
}
