package pvbinder

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/admitd/admitd/internal/controllers"
)

// reclaimVolume applies a released volume's reclaim policy. A volume
// migrated to CSI is left to the CSI provisioner.
func (c *Controller) reclaimVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	if volume.Annotations[storagehelpers.AnnMigratedTo] != "" {
		return nil
	}
	switch volume.Spec.PersistentVolumeReclaimPolicy {
	case corev1.PersistentVolumeReclaimRetain:
		return nil
	case corev1.PersistentVolumeReclaimRecycle:
		return c.recycleVolume(ctx, volume)
	case corev1.PersistentVolumeReclaimDelete:
		return c.deleteVolume(ctx, volume)
	}
	_, err := c.updateVolumePhaseWithEvent(ctx, volume, corev1.VolumeFailed, corev1.EventTypeWarning, "VolumeUnknownReclaimPolicy", "Volume has unrecognized PersistentVolumeReclaimPolicy")
	return err
}

// recycleVolume handles a released volume of policy Recycle. admitd has
// no recycler (upstream's host path and NFS recyclers run a pod that
// scrubs the volume), so once no running pod uses the claim the volume
// fails as upstream's does for a volume no plugin recycles.
func (c *Controller) recycleVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	fresh, err := c.client.CoreV1().PersistentVolumes().Get(ctx, volume.Name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	if !c.isVolumeReleased(fresh) {
		return nil
	}
	_, cached := c.claims.Get(volume.Spec.ClaimRef.Namespace, volume.Spec.ClaimRef.Name)
	if users := c.podsUsingClaim(volume.Spec.ClaimRef); len(users) > 0 && !cached {
		c.recorder.Event(volume, corev1.EventTypeNormal, reasonVolumeFailedRecycle, "Volume is used by pods: "+strings.Join(users, ","))
		return nil
	}
	_, err = c.updateVolumePhaseWithEvent(ctx, fresh, corev1.VolumeFailed, corev1.EventTypeWarning, reasonVolumeFailedRecycle, "No recycler plugin found for the volume!")
	return err
}

// podsUsingClaim are the namespace/name of the pods, not terminated, that
// use the claim ref names, sorted.
func (c *Controller) podsUsingClaim(ref *corev1.ObjectReference) []string {
	var names []string
	for _, pod := range controllers.PodsUsingClaim(c.pods, ref.Namespace, ref.Name) {
		if !podTerminated(pod) {
			names = append(names, pod.Namespace+"/"+pod.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// isVolumeReleased says whether the volume's claim is gone, or has been
// bound to another volume.
func (c *Controller) isVolumeReleased(volume *corev1.PersistentVolume) bool {
	ref := volume.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		return false
	}
	claim, ok := c.claims.Get(ref.Namespace, ref.Name)
	if ok && claim.UID == ref.UID {
		return claim.Spec.VolumeName != "" && claim.Spec.VolumeName != volume.Name
	}
	return true
}

// errNoPluginMatched is upstream's volume plugin manager's answer for a
// volume no plugin supports.
var errNoPluginMatched = errors.New("no volume plugin matched")

// tmpPath is the only host path upstream's host path deleter deletes.
var tmpPath = regexp.MustCompile("/tmp/.+")

// deleteVolume handles a released volume of policy Delete. A volume an
// external provisioner made, or a CSI volume, is left to its external
// deleter. Of the volumes kube-controller-manager's own plugins could
// delete, only host path volumes under /tmp are, and admitd deletes just
// the PersistentVolume (upstream also removes the directory on its own
// host); every other volume fails with upstream's error, event
// VolumeFailedDelete.
func (c *Controller) deleteVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	external, err := deleterOf(volume)
	if external {
		return nil
	}
	if err != nil {
		_, err = c.updateVolumePhaseWithEvent(ctx, volume, corev1.VolumeFailed, corev1.EventTypeWarning, reasonVolumeFailedDelete, err.Error())
		return err
	}
	fresh, err := c.client.CoreV1().PersistentVolumes().Get(ctx, volume.Name, metav1.GetOptions{})
	if err != nil || !c.isVolumeReleased(fresh) {
		return nil
	}
	if msg := hostPathDeleteError(volume); msg != "" {
		_, err = c.updateVolumePhaseWithEvent(ctx, volume, corev1.VolumeFailed, corev1.EventTypeWarning, reasonVolumeFailedDelete, msg)
		if err != nil {
			return err
		}
		return errors.New(msg)
	}
	if err := c.removeInTreeDeletionFinalizer(ctx, fresh); err != nil {
		return err
	}
	if err := c.client.CoreV1().PersistentVolumes().Delete(ctx, volume.Name, metav1.DeleteOptions{}); err != nil {
		c.log.Debug("deleting a reclaimed volume", "volume", volume.Name, "err", err)
	}
	return nil
}

// deleterOf says whether an external deleter handles the volume, or else
// why no deleter of kube-controller-manager does (nil: the host path
// deleter).
func deleterOf(volume *corev1.PersistentVolume) (external bool, err error) {
	if provisioner := volume.Annotations[storagehelpers.AnnDynamicallyProvisioned]; provisioner != "" {
		if !strings.HasPrefix(provisioner, "kubernetes.io/") {
			return true, nil
		}
		if provisioner != "kubernetes.io/host-path" {
			return false, fmt.Errorf("no volume plugin matched name: %s", provisioner)
		}
		return false, nil
	}
	if metav1.HasAnnotation(volume.ObjectMeta, storagehelpers.AnnMigratedTo) || volume.Spec.CSI != nil {
		return true, nil
	}
	// the binder's plugins are the host path one and the NFS one, which
	// recycles but does not delete
	switch src := &volume.Spec.PersistentVolumeSource; {
	case src.HostPath != nil:
		return false, nil
	case src.NFS != nil:
		err = errors.New("no deletable volume plugin matched")
	default:
		err = errNoPluginMatched
	}
	return false, fmt.Errorf("error getting deleter volume plugin for volume %q: %w", volume.Name, err)
}

// removeInTreeDeletionFinalizer removes kubernetes.io/pv-controller from
// the volume before it is deleted.
func (c *Controller) removeInTreeDeletionFinalizer(ctx context.Context, volume *corev1.PersistentVolume) error {
	if !slices.Contains(volume.Finalizers, storagehelpers.PVDeletionInTreeProtectionFinalizer) {
		return nil
	}
	clone := volume.DeepCopy()
	clone.Finalizers = slices.DeleteFunc(clone.Finalizers, func(f string) bool { return f == storagehelpers.PVDeletionInTreeProtectionFinalizer })
	if _, err := c.client.CoreV1().PersistentVolumes().Update(ctx, clone, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("persistent volume controller can't update finalizer: %v", err)
	}
	return nil
}

// hostPathDeleteError is why upstream's host path deleter would not
// delete the volume, "" when it would.
func hostPathDeleteError(volume *corev1.PersistentVolume) string {
	switch {
	case volume.Spec.HostPath == nil:
		return fmt.Sprintf("failed to create deleter for volume %q: spec.PersistentVolumeSource.HostPath is nil", volume.Name)
	case !tmpPath.MatchString(volume.Spec.HostPath.Path):
		return fmt.Sprintf("host_path deleter only supports /tmp/.+ but received provided %s", volume.Spec.HostPath.Path)
	}
	return ""
}
