package registry

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Pod create/update preparation (upstream pkg/registry/core/pod/strategy.go).

// preparePodForCreate sets the initial status (Pending), the
// SchedulingGated condition, merges matchLabelKeys into label selectors,
// copies deprecated AppArmor annotations into fields, completes pod-level
// resources and sets the QoS class (computed: a class the client sent is
// ignored, as in kube-apiserver 1.37).
func preparePodForCreate(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
	if len(pod.Spec.SchedulingGates) > 0 {
		pod.Status.Conditions = []corev1.PodCondition{{
			Type:               corev1.PodScheduled,
			Status:             corev1.ConditionFalse,
			Reason:             corev1.PodReasonSchedulingGated,
			Message:            "Scheduling is blocked due to non-empty scheduling gates",
			LastTransitionTime: metav1.Now(),
		}}
	}
	mutatePodAffinity(pod)
	for i := range pod.Spec.TopologySpreadConstraints {
		c := &pod.Spec.TopologySpreadConstraints[i]
		if c.LabelSelector != nil {
			appendLabelKeys(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn, pod.Labels)
		}
	}
	syncAppArmorAnnotations(pod)
	defaultPodLevelResources(pod, defaultGates{})
	pod.Status.QOSClass = computePodQOS(pod)
}

// preparePodForUpdate keeps the stored pod-level resources when an update
// leaves them out (a client that does not know them;
// PodLevelResourcesFixDefaulting, on by default).
func preparePodForUpdate(obj, old runtime.Object) {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	if pod.Spec.Resources == nil && oldPod.Spec.Resources != nil {
		pod.Spec.Resources = oldPod.Spec.Resources.DeepCopy()
	}
}

// mutatePodAffinity merges matchLabelKeys (In) and mismatchLabelKeys (NotIn)
// of every pod (anti-)affinity term into its label selector.
func mutatePodAffinity(pod *corev1.Pod) {
	a := pod.Spec.Affinity
	if a == nil {
		return
	}
	var terms []*corev1.PodAffinityTerm
	if pa := a.PodAffinity; pa != nil {
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, &pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, &pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, &pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, &pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
	}
	for _, t := range terms {
		if t.LabelSelector == nil {
			continue
		}
		appendLabelKeys(t.LabelSelector, t.MatchLabelKeys, metav1.LabelSelectorOpIn, pod.Labels)
		appendLabelKeys(t.LabelSelector, t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn, pod.Labels)
	}
}

func appendLabelKeys(sel *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator, podLabels map[string]string) {
	for _, key := range keys {
		if value, ok := podLabels[key]; ok {
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: []string{value}})
		}
	}
}

// syncAppArmorAnnotations copies a container's deprecated AppArmor
// annotation into its securityContext when the field is unset and differs
// from the pod-level profile.
func syncAppArmorAnnotations(pod *corev1.Pod) {
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows {
		return
	}
	var podProfile *corev1.AppArmorProfile
	if pod.Spec.SecurityContext != nil {
		podProfile = pod.Spec.SecurityContext.AppArmorProfile
	}
	sync := func(c *corev1.Container) {
		value, ok := pod.Annotations[corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+c.Name]
		if !ok || (c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil) {
			return
		}
		profile := validAppArmorProfileFor(value)
		if profile == nil || apiequality.Semantic.DeepEqual(profile, podProfile) {
			return
		}
		if c.SecurityContext == nil {
			c.SecurityContext = &corev1.SecurityContext{}
		}
		c.SecurityContext.AppArmorProfile = profile
	}
	for i := range pod.Spec.InitContainers {
		sync(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		sync(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.EphemeralContainers {
		sync((*corev1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
}

// validAppArmorProfileFor is the profile of an annotation, nil when the
// profile would not be valid (a local profile name padded with spaces or
// longer than PATH_MAX-1): upstream copies only valid profiles.
func validAppArmorProfileFor(annotation string) *corev1.AppArmorProfile {
	p := appArmorProfileFor(annotation)
	if p != nil && p.LocalhostProfile != nil && (strings.TrimSpace(*p.LocalhostProfile) != *p.LocalhostProfile || len(*p.LocalhostProfile) > 4095) {
		return nil
	}
	return p
}

func appArmorProfileFor(annotation string) *corev1.AppArmorProfile {
	switch {
	case annotation == corev1.DeprecatedAppArmorBetaProfileRuntimeDefault:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
	case annotation == corev1.DeprecatedAppArmorBetaProfileNameUnconfined:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	case strings.HasPrefix(annotation, corev1.DeprecatedAppArmorBetaProfileNamePrefix):
		name := strings.TrimPrefix(annotation, corev1.DeprecatedAppArmorBetaProfileNamePrefix)
		if name == "" {
			return nil
		}
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
	}
	return nil
}
