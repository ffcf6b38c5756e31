package pvbinder

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// knownAccessModes are the access modes in the order upstream names a
// set of them ("RWO,ROX,RWX,RWOP"); a volume's other modes are not part
// of its set.
var knownAccessModes = []corev1.PersistentVolumeAccessMode{
	corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod}

// modeSet is the known access modes of modes, in knownAccessModes' order.
func modeSet(modes []corev1.PersistentVolumeAccessMode) []corev1.PersistentVolumeAccessMode {
	var set []corev1.PersistentVolumeAccessMode
	for _, m := range knownAccessModes {
		if slices.Contains(modes, m) {
			set = append(set, m)
		}
	}
	return set
}

func modeSetKey(set []corev1.PersistentVolumeAccessMode) string {
	parts := make([]string, len(set))
	for i, m := range set {
		parts[i] = string(m)
	}
	return strings.Join(parts, ",")
}

// accessModeGroup is the volumes of one set of access modes.
type accessModeGroup struct {
	modes   []corev1.PersistentVolumeAccessMode
	volumes []*corev1.PersistentVolume
}

// candidateGroups groups volumes by their access modes and returns the
// groups whose modes include every mode the claim asks for, those of
// fewer modes first (upstream's index by access modes).
func candidateGroups(volumes []*corev1.PersistentVolume, requested []corev1.PersistentVolumeAccessMode) []*accessModeGroup {
	byKey := map[string]*accessModeGroup{}
	var groups []*accessModeGroup
	for _, v := range volumes {
		set := modeSet(v.Spec.AccessModes)
		key := modeSetKey(set)
		g := byKey[key]
		if g == nil {
			g = &accessModeGroup{modes: set}
			byKey[key] = g
			if containsAll(set, requested) {
				groups = append(groups, g)
			}
		}
		g.volumes = append(g.volumes, v)
	}
	slices.SortStableFunc(groups, func(a, b *accessModeGroup) int {
		if d := len(a.modes) - len(b.modes); d != 0 {
			return d
		}
		return strings.Compare(modeSetKey(a.modes), modeSetKey(b.modes))
	})
	return groups
}

func containsAll(have, want []corev1.PersistentVolumeAccessMode) bool {
	for _, m := range want {
		if !slices.Contains(have, m) {
			return false
		}
	}
	return true
}

// findBestMatch is the volume to bind claim to, nil when none fits: the
// volume pre-bound to it, or the smallest Available one that fits, from
// the first group of access modes that has one. A WaitForFirstConsumer
// claim (delayBinding) matches only a volume pre-bound to it.
func (c *Controller) findBestMatch(claim *corev1.PersistentVolumeClaim, delayBinding bool) (*corev1.PersistentVolume, error) {
	volumes := c.volumes.ListAll(all[*corev1.PersistentVolume])
	slices.SortFunc(volumes, func(a, b *corev1.PersistentVolume) int { return strings.Compare(a.Name, b.Name) })
	for _, g := range candidateGroups(volumes, claim.Spec.AccessModes) {
		v, err := storagehelpers.FindMatchingVolume(claim, g.volumes, nil, nil, delayBinding, true)
		if err != nil || v != nil {
			return v, err
		}
	}
	return nil, nil
}

// checkVolumeSatisfyClaim says why volume cannot be bound to claim, which
// names it in spec.volumeName; nil when it can.
func checkVolumeSatisfyClaim(volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	if volume.DeletionTimestamp != nil {
		return fmt.Errorf("the volume is marked for deletion %q", volume.Name)
	}
	requested := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	capacity := volume.Spec.Capacity[corev1.ResourceStorage]
	if capacity.Value() < requested.Value() {
		return errors.New("requested PV is too small")
	}
	if storagehelpers.GetPersistentVolumeClass(volume) != storagehelpers.GetPersistentVolumeClaimClass(claim) {
		return errors.New("storageClassName does not match")
	}
	if ptr.Deref(claim.Spec.VolumeAttributesClassName, "") != ptr.Deref(volume.Spec.VolumeAttributesClassName, "") {
		return errors.New("volumeAttributesClassName does not match")
	}
	if storagehelpers.CheckVolumeModeMismatches(&claim.Spec, &volume.Spec) {
		return errors.New("incompatible volumeMode")
	}
	if !storagehelpers.CheckAccessModes(claim, volume) {
		return errors.New("incompatible accessMode")
	}
	return nil
}
