package serviceaccount

import (
	"math/rand/v2"
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
	// The containers without mounts share one backing array, each its own
	// element capped at one (an append elsewhere copies).
	var spare []corev1.VolumeMount
	mounted := false
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			if hasMountAt(c.VolumeMounts, TokenMountPath) {
				continue
			}
			mounted = true
			if c.VolumeMounts != nil {
				c.VolumeMounts = append(c.VolumeMounts, mount)
				continue
			}
			if len(spare) == 0 {
				spare = make([]corev1.VolumeMount, withoutMounts(pod))
			}
			spare[0] = mount
			c.VolumeMounts, spare = spare[:1:1], spare[1:]
		}
	}
	if mounted && !exists {
		v := newTokenVolume()
		v.vol[0].Name = name
		if pod.Spec.Volumes == nil {
			pod.Spec.Volumes = v.vol[:]
		} else {
			pod.Spec.Volumes = append(pod.Spec.Volumes, v.vol[0])
		}
	}
}

// withoutMounts counts the init containers and containers with no volume
// mounts.
func withoutMounts(pod *corev1.Pod) int {
	n := 0
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if cs[i].VolumeMounts == nil {
				n++
			}
		}
	}
	return n
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
	return &newTokenVolume().src
}

// tokenVolumeBlock is a token volume and every part it points to, allocated
// together: one allocation instead of ten on every pod create.
type tokenVolumeBlock struct {
	vol        [1]corev1.Volume
	src        corev1.ProjectedVolumeSource
	sources    [3]corev1.VolumeProjection
	token      corev1.ServiceAccountTokenProjection
	ca         corev1.ConfigMapProjection
	caItems    [1]corev1.KeyToPath
	ns         corev1.DownwardAPIProjection
	nsItems    [1]corev1.DownwardAPIVolumeFile
	nsField    corev1.ObjectFieldSelector
	mode       int32
	expiration int64
}

// newTokenVolume returns the token volume, unnamed.
func newTokenVolume() *tokenVolumeBlock {
	// Field by field into zeroed memory: assigning whole structs would copy
	// them with write barriers while the collector runs.
	v := new(tokenVolumeBlock)
	v.mode, v.expiration = corev1.ProjectedVolumeSourceDefaultMode, TokenExpirationSeconds
	v.token.Path, v.token.ExpirationSeconds = "token", &v.expiration
	v.caItems[0].Key, v.caItems[0].Path = "ca.crt", "ca.crt"
	v.ca.Name, v.ca.Items = RootCAConfigMap, v.caItems[:]
	v.nsField.APIVersion, v.nsField.FieldPath = "v1", "metadata.namespace"
	v.nsItems[0].Path, v.nsItems[0].FieldRef = "namespace", &v.nsField
	v.ns.Items = v.nsItems[:]
	v.sources[0].ServiceAccountToken = &v.token
	v.sources[1].ConfigMap = &v.ca
	v.sources[2].DownwardAPI = &v.ns
	v.src.DefaultMode, v.src.Sources = &v.mode, v.sources[:]
	v.vol[0].Projected = &v.src
	return v
}

// nameAlphabet is the alphabet of the random suffix of a volume name
// (upstream's: no vowels, no look-alike digits).
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// randomVolumeName returns kube-api-access- and five random characters.
// Each of the 27⁵ suffixes is equally likely: one uniform draw below 27⁵,
// read as five base-27 digits (one draw instead of five).
func randomVolumeName() string {
	const base = uint32(len(nameAlphabet))
	const suffixes = base * base * base * base * base
	var b [len(VolumeNamePrefix) + 5]byte
	copy(b[:], VolumeNamePrefix)
	n := rand.Uint32N(suffixes)
	for i := len(VolumeNamePrefix); i < len(b); i++ {
		b[i] = nameAlphabet[n%base]
		n /= base
	}
	return string(b[:])
}
