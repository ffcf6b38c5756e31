package noderestriction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// apiObjectReference reports whether a mirror pod refers to another API
// object, and which kind of reference it is, in upstream's order of checks
// and words. An unknown volume type is an error.
func apiObjectReference(pod *corev1.Pod) (bool, string, error) {
	switch {
	case pod.Spec.ServiceAccountName != "":
		return true, "serviceaccounts", nil
	case referencesSecret(pod):
		return true, "secrets", nil
	case referencesConfigMap(pod):
		return true, "configmaps", nil
	case len(pod.Spec.ResourceClaims) > 0:
		return true, "resourceclaims", nil
	}
	for i := range pod.Spec.Volumes {
		if refs, what, err := volumeReference(&pod.Spec.Volumes[i]); refs || err != nil {
			return refs, what, err
		}
	}
	return false, "", nil
}

// containers are every container of the pod: init, regular, ephemeral.
func containers(spec *corev1.PodSpec) []*corev1.Container {
	var out []*corev1.Container
	for i := range spec.InitContainers {
		out = append(out, &spec.InitContainers[i])
	}
	for i := range spec.Containers {
		out = append(out, &spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		out = append(out, (*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	return out
}

// referencesSecret: a non-empty secret name in image pull secrets, the
// environment of any container, or a volume.
func referencesSecret(pod *corev1.Pod) bool {
	for _, s := range pod.Spec.ImagePullSecrets {
		if s.Name != "" {
			return true
		}
	}
	for _, c := range containers(&pod.Spec) {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil && e.SecretRef.Name != "" {
				return true
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name != "" {
				return true
			}
		}
	}
	for i := range pod.Spec.Volumes {
		if volumeSecretName(&pod.Spec.Volumes[i].VolumeSource) != "" {
			return true
		}
	}
	return false
}

// volumeSecretName is the first secret a volume names, or "".
func volumeSecretName(v *corev1.VolumeSource) string {
	ref := func(r *corev1.LocalObjectReference) string {
		if r == nil {
			return ""
		}
		return r.Name
	}
	switch {
	case v.AzureFile != nil:
		return v.AzureFile.SecretName
	case v.CephFS != nil:
		return ref(v.CephFS.SecretRef)
	case v.Cinder != nil:
		return ref(v.Cinder.SecretRef)
	case v.FlexVolume != nil:
		return ref(v.FlexVolume.SecretRef)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if s.Secret != nil && s.Secret.Name != "" {
				return s.Secret.Name
			}
		}
	case v.RBD != nil:
		return ref(v.RBD.SecretRef)
	case v.Secret != nil:
		return v.Secret.SecretName
	case v.ScaleIO != nil:
		return ref(v.ScaleIO.SecretRef)
	case v.ISCSI != nil:
		return ref(v.ISCSI.SecretRef)
	case v.StorageOS != nil:
		return ref(v.StorageOS.SecretRef)
	case v.CSI != nil:
		return ref(v.CSI.NodePublishSecretRef)
	}
	return ""
}

// referencesConfigMap: a non-empty config map name in the environment of
// any container or a volume.
func referencesConfigMap(pod *corev1.Pod) bool {
	for _, c := range containers(&pod.Spec) {
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil && e.ConfigMapRef.Name != "" {
				return true
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil && e.ValueFrom.ConfigMapKeyRef.Name != "" {
				return true
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil && s.ConfigMap.Name != "" {
					return true
				}
			}
		case v.ConfigMap != nil:
			if v.ConfigMap.Name != "" {
				return true
			}
		}
	}
	return false
}

// volumeReference reports whether a volume needs an API object.
func volumeReference(v *corev1.Volume) (bool, string, error) {
	s := &v.VolumeSource
	switch {
	case s.AWSElasticBlockStore != nil, s.AzureDisk != nil, s.CephFS != nil, s.Cinder != nil,
		s.DownwardAPI != nil, s.EmptyDir != nil, s.FC != nil, s.FlexVolume != nil, s.Flocker != nil, s.GCEPersistentDisk != nil,
		s.GitRepo != nil, s.HostPath != nil, s.Image != nil, s.ISCSI != nil, s.NFS != nil, s.PhotonPersistentDisk != nil,
		s.PortworxVolume != nil, s.Quobyte != nil, s.RBD != nil, s.ScaleIO != nil, s.StorageOS != nil, s.VsphereVolume != nil:
		return false, "", nil
	case s.ConfigMap != nil:
		return true, "configmaps (via configmap volumes)", nil
	case s.Secret != nil:
		return true, "secrets (via secret volumes)", nil
	case s.CSI != nil:
		return true, "csidrivers (via CSI volumes)", nil
	case s.Glusterfs != nil:
		return true, "endpoints (via glusterFS volumes)", nil
	case s.PersistentVolumeClaim != nil:
		return true, "persistentvolumeclaims", nil
	case s.Ephemeral != nil:
		return true, "persistentvolumeclaims (via ephemeral volumes)", nil
	case s.AzureFile != nil:
		return true, "secrets (via azureFile volumes)", nil
	case s.Projected != nil:
		return projectedReference(v)
	}
	return true, "", fmt.Errorf("unknown volume type for volume  %q", v.Name)
}

// projectedReference reports whether a projected volume needs an API
// object: every source but the downward API does.
func projectedReference(v *corev1.Volume) (bool, string, error) {
	for _, s := range v.Projected.Sources {
		switch {
		case s.ConfigMap != nil:
			return true, "configmaps (via projected volumes)", nil
		case s.Secret != nil:
			return true, "secrets (via projected volumes)", nil
		case s.ServiceAccountToken != nil:
			return true, "serviceaccounts (via projected volumes)", nil
		case s.ClusterTrustBundle != nil:
			return true, "clustertrustbundles", nil
		case s.PodCertificate != nil:
			return true, "podcertificates", nil
		case s.DownwardAPI == nil:
			return true, "", fmt.Errorf("unknown source for projected volume %q", v.Name)
		}
	}
	return false, "", nil
}
