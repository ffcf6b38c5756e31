package registry

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// defaultVolume applies SetDefaults_Volume and the defaults of each volume
// source (including the declarative +default markers of k8s.io/api).
func defaultVolume(v *corev1.Volume) {
	if v.VolumeSource == (corev1.VolumeSource{}) {
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	s := &v.VolumeSource
	if s.Image != nil && s.Image.PullPolicy == "" {
		s.Image.PullPolicy = defaultPullPolicy(s.Image.Reference)
	}
	if s.HostPath != nil && s.HostPath.Type == nil {
		s.HostPath.Type = ptr.To(corev1.HostPathUnset)
	}
	if s.Secret != nil && s.Secret.DefaultMode == nil {
		s.Secret.DefaultMode = ptr.To(corev1.SecretVolumeSourceDefaultMode)
	}
	if s.ConfigMap != nil && s.ConfigMap.DefaultMode == nil {
		s.ConfigMap.DefaultMode = ptr.To(corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if s.DownwardAPI != nil {
		if s.DownwardAPI.DefaultMode == nil {
			s.DownwardAPI.DefaultMode = ptr.To(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		defaultDownwardAPIFiles(s.DownwardAPI.Items)
	}
	if s.Projected != nil {
		defaultProjected(s.Projected)
	}
	if s.Ephemeral != nil && s.Ephemeral.VolumeClaimTemplate != nil {
		defaultPVCSpec(&s.Ephemeral.VolumeClaimTemplate.Spec)
	}
	defaultLegacyVolumeSources(s)
}

func defaultDownwardAPIFiles(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		defaultFieldSelector(items[i].FieldRef)
	}
}

func defaultProjected(p *corev1.ProjectedVolumeSource) {
	if p.DefaultMode == nil {
		p.DefaultMode = ptr.To(corev1.ProjectedVolumeSourceDefaultMode)
	}
	for i := range p.Sources {
		src := &p.Sources[i]
		if src.DownwardAPI != nil {
			defaultDownwardAPIFiles(src.DownwardAPI.Items)
		}
		if src.ServiceAccountToken != nil && src.ServiceAccountToken.ExpirationSeconds == nil {
			src.ServiceAccountToken.ExpirationSeconds = ptr.To[int64](3600)
		}
	}
}

// defaultLegacyVolumeSources applies the declarative defaults of the in-tree
// volume plugins.
func defaultLegacyVolumeSources(s *corev1.VolumeSource) {
	if s.ISCSI != nil && s.ISCSI.ISCSIInterface == "" {
		s.ISCSI.ISCSIInterface = "default"
	}
	if r := s.RBD; r != nil {
		if r.RBDPool == "" {
			r.RBDPool = "rbd"
		}
		if r.RadosUser == "" {
			r.RadosUser = "admin"
		}
		if r.Keyring == "" {
			r.Keyring = "/etc/ceph/keyring"
		}
	}
	if a := s.AzureDisk; a != nil {
		if a.CachingMode == nil {
			a.CachingMode = ptr.To(corev1.AzureDataDiskCachingReadWrite)
		}
		if a.FSType == nil {
			a.FSType = ptr.To("ext4")
		}
		if a.ReadOnly == nil {
			a.ReadOnly = ptr.To(false)
		}
		if a.Kind == nil {
			a.Kind = ptr.To(corev1.AzureSharedBlobDisk)
		}
	}
	if sio := s.ScaleIO; sio != nil {
		if sio.StorageMode == "" {
			sio.StorageMode = "ThinProvisioned"
		}
		if sio.FSType == "" {
			sio.FSType = "xfs"
		}
	}
}

// defaultPVCSpec applies SetDefaults_PersistentVolumeClaimSpec.
func defaultPVCSpec(spec *corev1.PersistentVolumeClaimSpec) {
	if spec.VolumeMode == nil {
		spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
	roundResourceList(spec.Resources.Limits)
	roundResourceList(spec.Resources.Requests)
}
