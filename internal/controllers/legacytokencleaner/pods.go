package legacytokencleaner

import corev1 "k8s.io/api/core/v1"

// podSecrets are the names of the Secrets the namespace's pods reference.
func (c *Controller) podSecrets(namespace string) map[string]bool {
	names := map[string]bool{}
	for _, pod := range c.pods.List(namespace, func(*corev1.Pod) bool { return true }) {
		for _, name := range PodSecretNames(pod) {
			names[name] = true
		}
	}
	return names
}

// PodSecretNames are the Secrets a pod references, as upstream's
// VisitPodSecretNames finds them: image pull secrets, every container's
// (init and ephemeral ones too) env and envFrom, and the secrets of its
// volumes, one source per volume.
func PodSecretNames(pod *corev1.Pod) []string {
	var names []string
	add := func(name string) {
		if name != "" {
			names = append(names, name)
		}
	}
	for _, ref := range pod.Spec.ImagePullSecrets {
		add(ref.Name)
	}
	for _, env := range containersEnv(&pod.Spec) {
		for _, from := range env.from {
			if from.SecretRef != nil {
				add(from.SecretRef.Name)
			}
		}
		for _, v := range env.vars {
			if v.ValueFrom != nil && v.ValueFrom.SecretKeyRef != nil {
				add(v.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	for i := range pod.Spec.Volumes {
		for _, name := range volumeSecretNames(&pod.Spec.Volumes[i].VolumeSource) {
			add(name)
		}
	}
	return names
}

type containerEnv struct {
	from []corev1.EnvFromSource
	vars []corev1.EnvVar
}

func containersEnv(spec *corev1.PodSpec) []containerEnv {
	var envs []containerEnv
	for _, c := range spec.InitContainers {
		envs = append(envs, containerEnv{c.EnvFrom, c.Env})
	}
	for _, c := range spec.Containers {
		envs = append(envs, containerEnv{c.EnvFrom, c.Env})
	}
	for _, c := range spec.EphemeralContainers {
		envs = append(envs, containerEnv{c.EnvFrom, c.Env})
	}
	return envs
}

// volumeSecretNames are the secrets of the first source of the volume
// that can name one, in upstream's order.
func volumeSecretNames(v *corev1.VolumeSource) []string {
	ref := func(r *corev1.LocalObjectReference) []string {
		if r == nil {
			return nil
		}
		return []string{r.Name}
	}
	switch {
	case v.AzureFile != nil:
		return []string{v.AzureFile.SecretName}
	case v.CephFS != nil:
		return ref(v.CephFS.SecretRef)
	case v.Cinder != nil:
		return ref(v.Cinder.SecretRef)
	case v.FlexVolume != nil:
		return ref(v.FlexVolume.SecretRef)
	case v.Projected != nil:
		var names []string
		for _, s := range v.Projected.Sources {
			if s.Secret != nil {
				names = append(names, s.Secret.Name)
			}
		}
		return names
	case v.RBD != nil:
		return ref(v.RBD.SecretRef)
	case v.Secret != nil:
		return []string{v.Secret.SecretName}
	case v.ScaleIO != nil:
		return ref(v.ScaleIO.SecretRef)
	case v.ISCSI != nil:
		return ref(v.ISCSI.SecretRef)
	case v.StorageOS != nil:
		if v.StorageOS.SecretRef != nil {
			return []string{v.StorageOS.SecretRef.Name}
		}
		return nil
	case v.CSI != nil:
		return ref(v.CSI.NodePublishSecretRef)
	}
	return nil
}
