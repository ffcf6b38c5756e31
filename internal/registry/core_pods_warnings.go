package registry

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Client warnings of a pod spec and its metadata, as upstream's
// GetWarningsForPod and GetWarningsForPodTemplate (pkg/api/pod): the same
// texts in the same order. root is nil for a Pod and the template's path
// (spec.template, template, ...) otherwise; the field paths in the texts
// start there.

// podSpecWarnings lists the warnings of spec and meta under root.
func podSpecWarnings(root *field.Path, spec *corev1.PodSpec, meta *metav1.ObjectMeta) []string {
	w := nodeLabelWarnings(root, spec)
	w = append(w, deprecatedPodAnnotationWarnings(root, meta)...)
	w = append(w, podVolumeWarnings(root, spec.Volumes)...)
	w = append(w, overlappingPathWarnings(spec.Volumes)...)
	w = append(w, duplicateHostAliasWarnings(root, spec.HostAliases)...)
	w = append(w, imagePullSecretWarnings(root, spec.ImagePullSecrets)...)
	for _, name := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		w = append(w, fractionalByteWarning(root.Child("spec", "overhead"), spec.Overhead, name)...)
	}
	if spec.SecurityContext == nil || spec.SecurityContext.SeccompProfile == nil {
		if _, ok := meta.Annotations[corev1.SeccompPodAnnotationKey]; ok {
			w = append(w, seccompAnnotationWarning(root, corev1.SeccompPodAnnotationKey))
		}
	}
	w = append(w, containerWarnings(root, spec, meta)...)
	w = append(w, portWarnings(root, spec)...)
	w = append(w, portNameWarnings(root, spec)...)
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		w = append(w, fmt.Sprintf("%s: must be >= 0; negative values are invalid and will be treated as 1",
			root.Child("spec", "terminationGracePeriodSeconds")))
	}
	w = append(w, podAffinityWarnings(root, spec.Affinity)...)
	if spec.DNSConfig != nil {
		for i, ns := range spec.DNSConfig.Nameservers {
			w = append(w, utilvalidation.GetWarningsForIP(root.Child("spec", "dnsConfig", "nameservers").Index(i), ns)...)
		}
	}
	for i, a := range spec.HostAliases {
		w = append(w, utilvalidation.GetWarningsForIP(root.Child("spec", "hostAliases").Index(i).Child("ip"), a.IP)...)
	}
	return w
}

// nodeLabelWarnings: deprecated node labels in the node selector (in key
// order; upstream walks the map, so its order of several is random), the
// node affinity's terms (and invalid label values in preferred terms) and
// topology spread keys; a spread constraint without a label selector.
func nodeLabelWarnings(root *field.Path, spec *corev1.PodSpec) []string {
	var w []string
	for _, k := range sortedKeys(spec.NodeSelector) {
		if msg, ok := deprecatedNodeLabels[k]; ok {
			w = append(w, fmt.Sprintf("%s: %s", root.Child("spec", "nodeSelector").Key(k), msg))
		}
	}
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil {
		na := spec.Affinity.NodeAffinity
		if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			p := root.Child("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			for i, t := range na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
				w = append(w, nodeSelectorTermWarnings(p.Index(i), t, false)...)
			}
		}
		p := root.Child("spec", "affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
		for i, t := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			w = append(w, nodeSelectorTermWarnings(p.Index(i).Child("preference"), t.Preference, true)...)
		}
	}
	for i, c := range spec.TopologySpreadConstraints {
		p := root.Child("spec", "topologySpreadConstraints").Index(i)
		if msg, ok := deprecatedNodeLabels[c.TopologyKey]; ok {
			w = append(w, fmt.Sprintf("%s: %s is %s", p.Child("topologyKey"), c.TopologyKey, msg))
		}
		if c.LabelSelector == nil {
			w = append(w, nullSelectorWarning(p.Child("labelSelector")))
		}
	}
	return w
}

func nodeSelectorTermWarnings(p *field.Path, t corev1.NodeSelectorTerm, checkValues bool) []string {
	var w []string
	for i, e := range t.MatchExpressions {
		ep := p.Child("matchExpressions").Index(i)
		if msg, ok := deprecatedNodeLabels[e.Key]; ok {
			w = append(w, fmt.Sprintf("%s: %s is %s", ep.Child("key"), e.Key, msg))
		}
		if !checkValues {
			continue
		}
		for j, v := range e.Values {
			for _, msg := range utilvalidation.IsValidLabelValue(v) {
				w = append(w, fmt.Sprintf("%s: %s is invalid, %s", ep.Child("values").Index(j), v, msg))
			}
		}
	}
	return w
}

func nullSelectorWarning(p *field.Path) string {
	return fmt.Sprintf("%s: a null labelSelector results in matching no pod", p)
}

// deprecatedPodAnnotations are the annotations that no longer do anything,
// in upstream's order.
var deprecatedPodAnnotations = []struct{ key, msg string }{
	{"scheduler.alpha.kubernetes.io/critical-pod", `non-functional in v1.16+; use the "priorityClassName" field instead`},
	{"security.alpha.kubernetes.io/sysctls", `non-functional in v1.11+; use the "sysctls" field instead`},
	{"security.alpha.kubernetes.io/unsafe-sysctls", `non-functional in v1.11+; use the "sysctls" field instead`},
}

func deprecatedPodAnnotationWarnings(root *field.Path, meta *metav1.ObjectMeta) []string {
	var w []string
	for _, a := range deprecatedPodAnnotations {
		if _, ok := meta.Annotations[a.key]; ok {
			w = append(w, fmt.Sprintf("%s: %s", root.Child("metadata", "annotations").Key(a.key), a.msg))
		}
	}
	return w
}

func seccompAnnotationWarning(root *field.Path, key string) string {
	return fmt.Sprintf(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`,
		root.Child("metadata", "annotations").Key(key))
}

// podVolumeWarnings: volume types that are deprecated or no longer work
// (GitRepoVolumeDriver is locked off in 1.37), and fractional sizes in
// ephemeral volumes' claim templates.
func podVolumeWarnings(root *field.Path, volumes []corev1.Volume) []string {
	var w []string
	for i, v := range volumes {
		p := root.Child("spec", "volumes").Index(i)
		for _, d := range []struct {
			set        bool
			name, what string
		}{
			{v.PhotonPersistentDisk != nil, "photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"},
			{v.GitRepo != nil, "gitRepo", "deprecated in v1.11, and disabled by default in v1.33+"},
			{v.ScaleIO != nil, "scaleIO", "deprecated in v1.16, non-functional in v1.22+"},
			{v.Flocker != nil, "flocker", "deprecated in v1.22, non-functional in v1.25+"},
			{v.StorageOS != nil, "storageOS", "deprecated in v1.22, non-functional in v1.25+"},
			{v.Quobyte != nil, "quobyte", "deprecated in v1.22, non-functional in v1.25+"},
			{v.Glusterfs != nil, "glusterfs", "deprecated in v1.25, non-functional in v1.26+"},
		} {
			if d.set {
				w = append(w, fmt.Sprintf("%s: %s", p.Child(d.name), d.what))
			}
		}
		if v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil {
			w = append(w, claimSpecWarnings(p.Child("ephemeral", "volumeClaimTemplate", "spec"), &v.Ephemeral.VolumeClaimTemplate.Spec)...)
		}
		if v.CephFS != nil {
			w = append(w, fmt.Sprintf("%s: deprecated in v1.28, non-functional in v1.31+", p.Child("cephfs")))
		}
		if v.RBD != nil {
			w = append(w, fmt.Sprintf("%s: deprecated in v1.28, non-functional in v1.31+", p.Child("rbd")))
		}
	}
	return w
}

// claimSpecWarnings: a claim's storage request or limit that is not a
// whole number of bytes (upstream's GetWarningsForPersistentVolumeClaimSpec).
func claimSpecWarnings(p *field.Path, s *corev1.PersistentVolumeClaimSpec) []string {
	w := fractionalByteWarning(p.Child("resources", "requests"), s.Resources.Requests, corev1.ResourceStorage)
	return append(w, fractionalByteWarning(p.Child("resources", "limits"), s.Resources.Limits, corev1.ResourceStorage)...)
}

// fractionalByteWarning warns when list's name is not a whole number.
func fractionalByteWarning(p *field.Path, list corev1.ResourceList, name corev1.ResourceName) []string {
	q, ok := list[name]
	if !ok || q.MilliValue()%1000 == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s: fractional byte value %q is invalid, must be an integer", p.Key(string(name)), q.String())}
}

func duplicateHostAliasWarnings(root *field.Path, aliases []corev1.HostAlias) []string {
	var w []string
	seen := map[string]bool{}
	for i, a := range aliases {
		if seen[a.IP] {
			w = append(w, fmt.Sprintf("%s: duplicate ip %q", root.Child("spec", "hostAliases").Index(i).Child("ip"), a.IP))
		}
		seen[a.IP] = true
	}
	return w
}

// imagePullSecretWarnings: names given twice, then empty names.
func imagePullSecretWarnings(root *field.Path, secrets []corev1.LocalObjectReference) []string {
	var w []string
	seen := map[string]bool{}
	p := root.Child("spec", "imagePullSecrets")
	for i, s := range secrets {
		if seen[s.Name] {
			w = append(w, fmt.Sprintf("%s: duplicate name %q", p.Index(i).Child("name"), s.Name))
		}
		seen[s.Name] = true
	}
	for i, s := range secrets {
		if s.Name == "" {
			w = append(w, fmt.Sprintf("%s: invalid empty name %q", p.Index(i).Child("name"), s.Name))
		}
	}
	return w
}

// podAffinityWarnings: pod (anti-)affinity terms without a label selector.
func podAffinityWarnings(root *field.Path, a *corev1.Affinity) []string {
	if a == nil {
		return nil
	}
	var w []string
	terms := func(p *field.Path, required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) {
		for i, t := range required {
			if t.LabelSelector == nil {
				w = append(w, nullSelectorWarning(p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i).Child("labelSelector")))
			}
		}
		for i, t := range preferred {
			if t.PodAffinityTerm.LabelSelector == nil {
				w = append(w, nullSelectorWarning(p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("podAffinityTerm", "labelSelector")))
			}
		}
	}
	if pa := a.PodAffinity; pa != nil {
		terms(root.Child("spec", "affinity", "podAffinity"), pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		terms(root.Child("spec", "affinity", "podAntiAffinity"), pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	return w
}

// podAppArmorWarnings are the warnings of a Pod create about containers'
// deprecated AppArmor annotations, which upstream gives while it copies
// them into the containers' fields (syncAppArmorAnnotations), from the pod
// before that: one per annotation of a container without the field whose
// profile is invalid or differs from the pod's. Windows pods are left
// alone.
func podAppArmorWarnings(obj runtime.Object) []string {
	pod := obj.(*corev1.Pod)
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows {
		return nil
	}
	var podProfile *corev1.AppArmorProfile
	if pod.Spec.SecurityContext != nil {
		podProfile = pod.Spec.SecurityContext.AppArmorProfile
	}
	var w []string
	eachContainer(nil, &pod.Spec, func(c *corev1.Container, _ *field.Path) {
		key := corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + c.Name
		value, ok := pod.Annotations[key]
		if !ok || (c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil) {
			return
		}
		if profile := validAppArmorProfileFor(value); profile == nil || !apiequality.Semantic.DeepEqual(profile, podProfile) {
			w = append(w, fmt.Sprintf(`%s: deprecated since v1.30; use the "appArmorProfile" field instead`, metadataPath.Child("annotations").Key(key)))
		}
	})
	return w
}
