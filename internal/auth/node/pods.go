package node

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// AddPod records a pod. A pod without spec.nodeName is ignored; one with it
// gives its node access to the pod and, unless it is a mirror pod, to its
// service account and the secrets, configmaps, persistent volume claims
// (ephemeral volumes included) and resource claims it references.
func (g *Graph) AddPod(pod *corev1.Pod) { g.UpdatePod(nil, pod) }

// UpdatePod records a change of a pod. As upstream, the pod's references
// are taken again only when its node, uid, number of ephemeral containers
// or resource claim statuses changed (the rest of a bound pod's spec is
// immutable); an update that clears spec.nodeName is ignored.
func (g *Graph) UpdatePod(old, pod *corev1.Pod) {
	if pod.Spec.NodeName == "" {
		return
	}
	if old != nil && !podChanged(old, pod) {
		return
	}
	defer g.metrics.observe("AddPod", time.Now())
	key := ref{kindPod, pod.Namespace, pod.Name}
	e := podEntry{node: pod.Spec.NodeName, refs: podRefs(pod)}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.setPodLocked(key, e)
}

// DeletePod forgets a pod. A pod without spec.nodeName is ignored, as
// upstream.
func (g *Graph) DeletePod(pod *corev1.Pod) {
	if pod.Spec.NodeName == "" {
		return
	}
	defer g.metrics.observe("DeletePod", time.Now())
	g.mu.Lock()
	defer g.mu.Unlock()
	g.removePodLocked(ref{kindPod, pod.Namespace, pod.Name})
}

// podChanged reports whether an update may change what the pod references.
func podChanged(old, pod *corev1.Pod) bool {
	if old.Spec.NodeName != pod.Spec.NodeName || old.UID != pod.UID {
		return true
	}
	if len(pod.Spec.EphemeralContainers) > len(old.Spec.EphemeralContainers) {
		return true
	}
	return !claimStatusesEqual(old.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses) ||
		!extendedClaimStatusEqual(old.Status.ExtendedResourceClaimStatus, pod.Status.ExtendedResourceClaimStatus)
}

func claimStatusesEqual(a, b []corev1.PodResourceClaimStatus) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.PodResourceClaimStatus) bool {
		return x.Name == y.Name && equalPtr(x.ResourceClaimName, y.ResourceClaimName)
	})
}

func extendedClaimStatusEqual(a, b *corev1.PodExtendedResourceClaimStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ResourceClaimName == b.ResourceClaimName && slices.Equal(a.RequestMappings, b.RequestMappings)
}

func equalPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// podRefs lists, each once, the objects a bound pod gives its node access to.
func podRefs(pod *corev1.Pod) []ref {
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return nil
	}
	s := refSet{namespace: pod.Namespace, seen: map[ref]bool{}}
	s.add(kindServiceAccount, pod.Spec.ServiceAccountName)
	for _, p := range pod.Spec.ImagePullSecrets {
		s.add(kindSecret, p.Name)
	}
	visitContainers(&pod.Spec, s.addEnv)
	for i := range pod.Spec.Volumes {
		s.addVolume(pod, &pod.Spec.Volumes[i])
	}
	for _, name := range podClaimNames(pod) {
		s.add(kindResourceClaim, name)
	}
	return s.refs
}

// refSet collects the distinct references of one pod.
type refSet struct {
	namespace string
	seen      map[ref]bool
	refs      []ref
}

// add records a reference; references with no name are skipped, except
// resource claims, which upstream records even when empty (they can never
// be asked for, as a request needs a name).
func (s *refSet) add(k kind, name string) {
	if name == "" && k != kindResourceClaim {
		return
	}
	r := ref{k, s.namespace, name}
	if !s.seen[r] {
		s.seen[r] = true
		s.refs = append(s.refs, r)
	}
}

func visitContainers(spec *corev1.PodSpec, f func(env []corev1.EnvVar, from []corev1.EnvFromSource)) {
	for _, c := range spec.InitContainers {
		f(c.Env, c.EnvFrom)
	}
	for _, c := range spec.Containers {
		f(c.Env, c.EnvFrom)
	}
	for _, c := range spec.EphemeralContainers {
		f(c.Env, c.EnvFrom)
	}
}

func (s *refSet) addEnv(env []corev1.EnvVar, from []corev1.EnvFromSource) {
	for _, f := range from {
		if f.SecretRef != nil {
			s.add(kindSecret, f.SecretRef.Name)
		}
		if f.ConfigMapRef != nil {
			s.add(kindConfigMap, f.ConfigMapRef.Name)
		}
	}
	for _, e := range env {
		if e.ValueFrom == nil {
			continue
		}
		if e.ValueFrom.SecretKeyRef != nil {
			s.add(kindSecret, e.ValueFrom.SecretKeyRef.Name)
		}
		if e.ValueFrom.ConfigMapKeyRef != nil {
			s.add(kindConfigMap, e.ValueFrom.ConfigMapKeyRef.Name)
		}
	}
}

// podClaimNames lists the resource claims that exist for the pod: those it
// names, those created from its templates (found in its status) and its
// extended-resource claim.
func podClaimNames(pod *corev1.Pod) []string {
	var names []string
	for _, c := range pod.Spec.ResourceClaims {
		switch {
		case c.ResourceClaimName != nil:
			names = append(names, *c.ResourceClaimName)
		case c.ResourceClaimTemplateName != nil:
			if name := templateClaimName(pod, c.Name); name != nil {
				names = append(names, *name)
			}
		}
	}
	if st := pod.Status.ExtendedResourceClaimStatus; st != nil && st.ResourceClaimName != "" {
		names = append(names, st.ResourceClaimName)
	}
	return names
}

// templateClaimName is the claim generated for the pod's claim entry, from
// the first status entry of that name; nil while it does not exist.
func templateClaimName(pod *corev1.Pod, entry string) *string {
	for _, st := range pod.Status.ResourceClaimStatuses {
		if st.Name == entry {
			return st.ResourceClaimName
		}
	}
	return nil
}
