package serviceaccount

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/pkg/admission"
)

// checkSecretReferences refuses the first secret the pod uses that the
// account does not list: secret volumes (projected secrets are not
// checked), then the env and envFrom of init containers and containers,
// then image pull secrets against the account's.
func checkSecretReferences(sa *corev1.ServiceAccount, pod *corev1.Pod) error {
	mountable := secretNames(sa.Secrets)
	for _, v := range pod.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		if !mountable[v.Secret.SecretName] {
			return fmt.Errorf("volume with secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", v.Secret.SecretName, sa.Name)
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if err := checkContainerSecrets("init container", c.Name, c.Env, c.EnvFrom, mountable, sa.Name); err != nil {
			return err
		}
	}
	for _, c := range pod.Spec.Containers {
		if err := checkContainerSecrets("container", c.Name, c.Env, c.EnvFrom, mountable, sa.Name); err != nil {
			return err
		}
	}
	pullable := map[string]bool{}
	for _, s := range sa.ImagePullSecrets {
		pullable[s.Name] = true
	}
	for i, ref := range pod.Spec.ImagePullSecrets {
		if !pullable[ref.Name] {
			return fmt.Errorf("imagePullSecrets[%d].name=\"%s\" is not allowed because service account %s does not reference that imagePullSecret", i, ref.Name, sa.Name)
		}
	}
	return nil
}

// checkEphemeralSecretReferences is checkSecretReferences for the env and
// envFrom of the ephemeral containers.
func checkEphemeralSecretReferences(sa *corev1.ServiceAccount, pod *corev1.Pod) error {
	mountable := secretNames(sa.Secrets)
	for _, c := range pod.Spec.EphemeralContainers {
		if err := checkContainerSecrets("ephemeral container", c.Name, c.Env, c.EnvFrom, mountable, sa.Name); err != nil {
			return err
		}
	}
	return nil
}

func secretNames(refs []corev1.ObjectReference) map[string]bool {
	names := make(map[string]bool, len(refs))
	for _, r := range refs {
		names[r.Name] = true
	}
	return names
}

// checkContainerSecrets refuses the first env or envFrom secret of one
// container that is not mountable; kind is how the message names the
// container.
func checkContainerSecrets(kind, name string, env []corev1.EnvVar, envFrom []corev1.EnvFromSource, mountable map[string]bool, sa string) error {
	for _, e := range env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && !mountable[e.ValueFrom.SecretKeyRef.Name] {
			return fmt.Errorf("%s %s with envVar %s referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", kind, name, e.Name, e.ValueFrom.SecretKeyRef.Name, sa)
		}
	}
	for _, e := range envFrom {
		if e.SecretRef != nil && !mountable[e.SecretRef.Name] {
			return fmt.Errorf("%s %s with envFrom referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", kind, name, e.SecretRef.Name, sa)
		}
	}
	return nil
}

// validateMirrorPod refuses a mirror pod that names a service account,
// references a secret, or projects a service-account token.
func validateMirrorPod(a *admission.Attributes, pod *corev1.Pod) error {
	if pod.Spec.ServiceAccountName != "" {
		return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not reference service accounts"))
	}
	if referencesSecret(pod) {
		return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not reference secrets"))
	}
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ServiceAccountToken != nil {
				return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not use ServiceAccountToken volume projections"))
			}
		}
	}
	return nil
}

// referencesSecret reports whether the pod names a secret (by a non-empty
// name) anywhere: image pull secrets, the env and envFrom of every kind of
// container, and every volume source that takes a secret.
func referencesSecret(pod *corev1.Pod) bool {
	for _, r := range pod.Spec.ImagePullSecrets {
		if r.Name != "" {
			return true
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if containerReferencesSecret(c.Env, c.EnvFrom) {
			return true
		}
	}
	for _, c := range pod.Spec.Containers {
		if containerReferencesSecret(c.Env, c.EnvFrom) {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if containerReferencesSecret(c.Env, c.EnvFrom) {
			return true
		}
	}
	for i := range pod.Spec.Volumes {
		if volumeSecret(&pod.Spec.Volumes[i].VolumeSource) {
			return true
		}
	}
	return false
}

func containerReferencesSecret(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) bool {
	for _, e := range envFrom {
		if e.SecretRef != nil && e.SecretRef.Name != "" {
			return true
		}
	}
	for _, e := range env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name != "" {
			return true
		}
	}
	return false
}

// volumeSecret reports whether a volume source names a secret. Like
// upstream, it looks at the first source set only (a valid volume has one).
func volumeSecret(s *corev1.VolumeSource) bool {
	named := func(ref *corev1.LocalObjectReference) bool { return ref != nil && ref.Name != "" }
	switch {
	case s.AzureFile != nil:
		return s.AzureFile.SecretName != ""
	case s.CephFS != nil:
		return named(s.CephFS.SecretRef)
	case s.Cinder != nil:
		return named(s.Cinder.SecretRef)
	case s.FlexVolume != nil:
		return named(s.FlexVolume.SecretRef)
	case s.Projected != nil:
		for _, p := range s.Projected.Sources {
			if p.Secret != nil && p.Secret.Name != "" {
				return true
			}
		}
		return false
	case s.RBD != nil:
		return named(s.RBD.SecretRef)
	case s.Secret != nil:
		return s.Secret.SecretName != ""
	case s.ScaleIO != nil:
		return named(s.ScaleIO.SecretRef)
	case s.ISCSI != nil:
		return named(s.ISCSI.SecretRef)
	case s.StorageOS != nil:
		return named(s.StorageOS.SecretRef)
	case s.CSI != nil:
		return named(s.CSI.NodePublishSecretRef)
	}
	return false
}
