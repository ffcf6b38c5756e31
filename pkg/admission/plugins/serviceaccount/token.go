package serviceaccount

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// TokenExpirationSeconds is the lifetime the projected token asks for;
// kube-apiserver recognises 3607 as the value this plugin sets (its
// "warn-only" bound tokens).
const TokenExpirationSeconds int64 = 3607

// RootCAConfigMap is the ConfigMap of every namespace that holds the CA
// of the API server (key ca.crt).
const RootCAConfigMap = "kube-root-ca.crt"

// mountToken mounts the token volume at TokenMountPath in every init
// container and container that has nothing mounted there, adding the
// volume when a container needed it. A volume named kube-api-access-*
// already in the pod is reused (so a second run changes nothing); otherwise
// the new volume is named by newName.
func mountToken(pod *corev1.Pod, newName func() string) {
	name, exists := "", false
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, VolumeNamePrefix) {
			name, exists = v.Name, true
			break
		}
	}
	if !exists {
		name = newName()
	}
	mount := corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: TokenMountPath}
	mounted := false
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if !hasMountAt(cs[i].VolumeMounts, TokenMountPath) {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
				mounted = true
			}
		}
	}
	if mounted && !exists {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
			Name:         name,
			VolumeSource: corev1.VolumeSource{Projected: TokenVolumeSource()},
		})
	}
}

func hasMountAt(mounts []corev1.VolumeMount, path string) bool {
	for _, m := range mounts {
		if m.MountPath == path {
			return true
		}
	}
	return false
}

// TokenVolumeSource is the projected source of the token volume: the bound
// token, the cluster CA and the pod's namespace, with the default mode
// spelled out.
func TokenVolumeSource() *corev1.ProjectedVolumeSource {
	mode := corev1.ProjectedVolumeSourceDefaultMode
	expiration := TokenExpirationSeconds
	return &corev1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiration}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: RootCAConfigMap},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{
				Items: []corev1.DownwardAPIVolumeFile{{
					Path:     "namespace",
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
				}},
			}},
		},
	}
}
