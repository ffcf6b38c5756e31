package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// eachContainer calls f with every container of spec and its path under
// root: init containers, containers, then ephemeral containers.
func eachContainer(root *field.Path, spec *corev1.PodSpec, f func(c *corev1.Container, p *field.Path)) {
	for i := range spec.InitContainers {
		f(&spec.InitContainers[i], root.Child("spec", "initContainers").Index(i))
	}
	for i := range spec.Containers {
		f(&spec.Containers[i], root.Child("spec", "containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		f((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), root.Child("spec", "ephemeralContainers").Index(i))
	}
}

// containerWarnings, per container: a seccomp annotation without the
// field; in a template (root not nil), an AppArmor annotation without the
// field that differs from the pod's profile (a Pod warns while the
// annotation is synced instead); fractional memory and ephemeral storage;
// env entries that hide an earlier one of the same name.
func containerWarnings(root *field.Path, spec *corev1.PodSpec, meta *metav1.ObjectMeta) []string {
	var podAppArmor *corev1.AppArmorProfile
	if spec.SecurityContext != nil {
		podAppArmor = spec.SecurityContext.AppArmorProfile
	}
	var w []string
	eachContainer(root, spec, func(c *corev1.Container, p *field.Path) {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			if _, ok := meta.Annotations[corev1.SeccompContainerAnnotationKeyPrefix+c.Name]; ok {
				w = append(w, seccompAnnotationWarning(root, corev1.SeccompContainerAnnotationKeyPrefix+c.Name))
			}
		}
		if root != nil && (c.SecurityContext == nil || c.SecurityContext.AppArmorProfile == nil) {
			key := corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + c.Name
			if value, ok := meta.Annotations[key]; ok && (podAppArmor == nil || !apiequality.Semantic.DeepEqual(podAppArmor, appArmorProfileFor(value))) {
				w = append(w, fmt.Sprintf(`%s: deprecated since v1.30; use the "appArmorProfile" field instead`,
					root.Child("metadata", "annotations").Key(key)))
			}
		}
		for _, r := range []struct {
			list  corev1.ResourceList
			field string
			name  corev1.ResourceName
		}{
			{c.Resources.Limits, "limits", corev1.ResourceMemory},
			{c.Resources.Requests, "requests", corev1.ResourceMemory},
			{c.Resources.Limits, "limits", corev1.ResourceEphemeralStorage},
			{c.Resources.Requests, "requests", corev1.ResourceEphemeralStorage},
		} {
			w = append(w, fractionalByteWarning(p.Child("resources", r.field), r.list, r.name)...)
		}
		w = append(w, hiddenEnvWarnings(p, c.Env)...)
	})
	return w
}

// hiddenEnvWarnings: a variable defined again, unless the new value is a
// plain value that refers to the earlier one (X="$(X)more").
func hiddenEnvWarnings(p *field.Path, env []corev1.EnvVar) []string {
	var w []string
	seen := map[string]bool{}
	for i, e := range env {
		if !seen[e.Name] {
			seen[e.Name] = true
			continue
		}
		ref := "$(" + e.Name + ")"
		if e.ValueFrom != nil || e.Value == ref || !strings.Contains(e.Value, ref) {
			w = append(w, fmt.Sprintf("%s: hides previous definition of %q, which may be dropped when using apply", p.Child("env").Index(i), e.Name))
		}
	}
	return w
}

type declaredPort struct {
	path *field.Path
	port corev1.ContainerPort
}

// portWarnings: a hostIP without a hostPort, and container ports (of any
// containers) with the same number and protocol whose host sides are the
// same, overlap, or are ambiguous.
func portWarnings(root *field.Path, spec *corev1.PodSpec) []string {
	var w []string
	byPort := map[string][]declaredPort{}
	eachContainer(root, spec, func(c *corev1.Container, p *field.Path) {
		for i, port := range c.Ports {
			pp := p.Child("ports").Index(i)
			if port.HostIP != "" && port.HostPort == 0 {
				w = append(w, fmt.Sprintf("%s: hostIP set without hostPort: %+v", pp, port))
			}
			key := fmt.Sprintf("%d/%s", port.ContainerPort, port.Protocol)
			for _, other := range byPort[key] {
				if msg := portConflict(port, other.port); msg != "" {
					w = append(w, fmt.Sprintf("%s: %s port definition with %s", pp, msg, other.path))
				}
			}
			byPort[key] = append(byPort[key], declaredPort{pp, port})
		}
	})
	return w
}

// portConflict says how two declarations of one container port clash on
// the host side ("" when they do not).
func portConflict(a, b corev1.ContainerPort) string {
	switch {
	case a.HostIP == b.HostIP && a.HostPort == b.HostPort:
		return "duplicate"
	case a.HostPort == 0 || b.HostPort == 0:
		return "overlapping"
	case a.HostPort == b.HostPort && (a.HostIP == "") != (b.HostIP == ""):
		return "dangerously ambiguous"
	}
	return ""
}

// portNameWarnings: a port name used again, by any container.
func portNameWarnings(root *field.Path, spec *corev1.PodSpec) []string {
	var w []string
	first := map[string]*field.Path{}
	eachContainer(root, spec, func(c *corev1.Container, p *field.Path) {
		for i, port := range c.Ports {
			if port.Name == "" {
				continue
			}
			pp := p.Child("ports").Index(i)
			if other, ok := first[port.Name]; ok {
				w = append(w, fmt.Sprintf("%s: duplicate port name %q with %s, services and probes that select ports by name will use %s",
					pp, port.Name, other, other))
				continue
			}
			first[port.Name] = pp
		}
	})
	return w
}
