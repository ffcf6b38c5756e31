package podsecurity

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psapi "k8s.io/pod-security-admission/api"
)

// passes reports whether a pod certainly passes every check of lv, as the
// library's evaluator would judge it. It is a sufficient condition, kept
// simple: false means "ask the library", which alone words a refusal. It
// knows the checks of the latest version only, so any other version is a
// false; so is anything uncommon a check looks at (host namespaces, SELinux
// or AppArmor settings, sysctls, Windows options, hostPath or other
// restricted volumes, host ports and probe hosts, added capabilities beyond
// NET_BIND_SERVICE, a procMount). TestPassesImpliesLibraryAllows holds it
// to the library over generated pods.
func passes(lv psapi.LevelVersion, meta *metav1.ObjectMeta, spec *corev1.PodSpec) bool {
	switch {
	case lv.Level == psapi.LevelPrivileged:
		return true
	case !lv.Version.Latest():
		return false
	case lv.Level == psapi.LevelBaseline:
		return passesBaseline(meta, spec)
	case lv.Level == psapi.LevelRestricted:
		return passesBaseline(meta, spec) && passesRestricted(spec)
	}
	return false
}

// appArmorAnnotationPrefix starts the deprecated per-container AppArmor
// annotations the baseline level checks.
const appArmorAnnotationPrefix = corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix

// passesBaseline covers the baseline checks: host namespaces, privileged,
// capabilities, hostPath volumes, host ports, probe and lifecycle hosts,
// AppArmor, SELinux, procMount, seccomp, sysctls and Windows host process.
func passesBaseline(meta *metav1.ObjectMeta, spec *corev1.PodSpec) bool {
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		return false
	}
	for k := range meta.Annotations {
		if strings.HasPrefix(k, appArmorAnnotationPrefix) {
			return false
		}
	}
	if sc := spec.SecurityContext; sc != nil {
		if sc.SELinuxOptions != nil || len(sc.Sysctls) != 0 || sc.WindowsOptions != nil || sc.AppArmorProfile != nil ||
			(sc.SeccompProfile != nil && !validSeccomp(sc.SeccompProfile.Type)) {
			return false
		}
	}
	for i := range spec.Volumes {
		if spec.Volumes[i].HostPath != nil {
			return false
		}
	}
	ok := true
	eachContainer(spec, func(c *corev1.Container) {
		ok = ok && containerPassesBaseline(c)
	})
	return ok
}

func containerPassesBaseline(c *corev1.Container) bool {
	for i := range c.Ports {
		if c.Ports[i].HostPort != 0 {
			return false
		}
	}
	if !probeHostless(c.LivenessProbe) || !probeHostless(c.ReadinessProbe) || !probeHostless(c.StartupProbe) {
		return false
	}
	if l := c.Lifecycle; l != nil && (!handlerHostless(l.PostStart) || !handlerHostless(l.PreStop)) {
		return false
	}
	sc := c.SecurityContext
	if sc == nil {
		return true
	}
	if (sc.Privileged != nil && *sc.Privileged) || sc.SELinuxOptions != nil || sc.WindowsOptions != nil || sc.AppArmorProfile != nil ||
		(sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount) ||
		(sc.SeccompProfile != nil && !validSeccomp(sc.SeccompProfile.Type)) {
		return false
	}
	if sc.Capabilities != nil {
		for _, capability := range sc.Capabilities.Add {
			if capability != "NET_BIND_SERVICE" {
				return false
			}
		}
	}
	return true
}

func probeHostless(p *corev1.Probe) bool {
	return p == nil || ((p.HTTPGet == nil || p.HTTPGet.Host == "") && (p.TCPSocket == nil || p.TCPSocket.Host == ""))
}

func handlerHostless(h *corev1.LifecycleHandler) bool {
	return h == nil || ((h.HTTPGet == nil || h.HTTPGet.Host == "") && (h.TCPSocket == nil || h.TCPSocket.Host == ""))
}

// passesRestricted covers what the restricted level adds to baseline:
// volume types, allowPrivilegeEscalation, runAsNonRoot, runAsUser, seccomp
// set, capabilities dropped.
func passesRestricted(spec *corev1.PodSpec) bool {
	for i := range spec.Volumes {
		if !restrictedVolume(&spec.Volumes[i].VolumeSource) {
			return false
		}
	}
	podNonRoot, podSeccomp := false, false
	if sc := spec.SecurityContext; sc != nil {
		if (sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot) || (sc.RunAsUser != nil && *sc.RunAsUser == 0) {
			return false
		}
		podNonRoot = sc.RunAsNonRoot != nil
		podSeccomp = sc.SeccompProfile != nil // valid: passesBaseline checked it
	}
	ok := true
	eachContainer(spec, func(c *corev1.Container) {
		ok = ok && containerPassesRestricted(c, podNonRoot, podSeccomp)
	})
	return ok
}

func containerPassesRestricted(c *corev1.Container, podNonRoot, podSeccomp bool) bool {
	sc := c.SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		return false
	}
	if sc.RunAsNonRoot == nil && !podNonRoot || sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot {
		return false
	}
	if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		return false
	}
	if sc.SeccompProfile == nil && !podSeccomp { // a set one is valid: baseline checked it
		return false
	}
	return sc.Capabilities != nil && dropsAll(sc.Capabilities.Drop)
}

func dropsAll(drop []corev1.Capability) bool {
	for _, c := range drop {
		if c == "ALL" {
			return true
		}
	}
	return false
}

// restrictedVolume reports whether v is of a type the restricted level
// allows.
func restrictedVolume(v *corev1.VolumeSource) bool {
	return v.ConfigMap != nil || v.CSI != nil || v.DownwardAPI != nil || v.EmptyDir != nil || v.Ephemeral != nil ||
		v.Image != nil || v.PersistentVolumeClaim != nil || v.Projected != nil || v.Secret != nil
}

func validSeccomp(t corev1.SeccompProfileType) bool {
	return t == corev1.SeccompProfileTypeRuntimeDefault || t == corev1.SeccompProfileTypeLocalhost
}

// eachContainer calls f for the init, regular and ephemeral containers.
func eachContainer(spec *corev1.PodSpec, f func(*corev1.Container)) {
	for i := range spec.InitContainers {
		f(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		f(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		f((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
}
