package node

import corev1 "k8s.io/api/core/v1"

// addVolume records what one pod volume references. As upstream, the
// secrets, the configmaps and the claim of a volume are each read from the
// first volume source that can hold them, in a fixed order (a valid volume
// has only one source).
func (s *refSet) addVolume(pod *corev1.Pod, v *corev1.Volume) {
	for _, name := range volumeSecrets(&v.VolumeSource) {
		s.add(kindSecret, name)
	}
	switch {
	case v.Projected != nil:
		for _, src := range v.Projected.Sources {
			if src.ConfigMap != nil {
				s.add(kindConfigMap, src.ConfigMap.Name)
			}
		}
	case v.ConfigMap != nil:
		s.add(kindConfigMap, v.ConfigMap.Name)
	}
	switch {
	case v.PersistentVolumeClaim != nil:
		s.add(kindPVC, v.PersistentVolumeClaim.ClaimName)
	case v.Ephemeral != nil:
		// The claim of an ephemeral volume is named <pod>-<volume>.
		s.add(kindPVC, pod.Name+"-"+v.Name)
	}
}

// volumeSecrets are the secrets named by the first secret-holding source
// of v.
func volumeSecrets(v *corev1.VolumeSource) []string {
	switch {
	case v.AzureFile != nil:
		return []string{v.AzureFile.SecretName}
	case v.CephFS != nil:
		return localName(v.CephFS.SecretRef)
	case v.Cinder != nil:
		return localName(v.Cinder.SecretRef)
	case v.FlexVolume != nil:
		return localName(v.FlexVolume.SecretRef)
	case v.Projected != nil:
		var names []string
		for _, src := range v.Projected.Sources {
			if src.Secret != nil {
				names = append(names, src.Secret.Name)
			}
		}
		return names
	case v.RBD != nil:
		return localName(v.RBD.SecretRef)
	case v.Secret != nil:
		return []string{v.Secret.SecretName}
	case v.ScaleIO != nil:
		return localName(v.ScaleIO.SecretRef)
	case v.ISCSI != nil:
		return localName(v.ISCSI.SecretRef)
	case v.StorageOS != nil:
		return localName(v.StorageOS.SecretRef)
	case v.CSI != nil:
		return localName(v.CSI.NodePublishSecretRef)
	}
	return nil
}

func localName(r *corev1.LocalObjectReference) []string {
	if r == nil {
		return nil
	}
	return []string{r.Name}
}
