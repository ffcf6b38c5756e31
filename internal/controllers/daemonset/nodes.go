package daemonset

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// daemonTolerations are the tolerations every daemon pod gets on top of
// its template's (upstream's AddOrUpdateDaemonPodTolerations): it stays on
// a node not ready or unreachable, and is placed on one under disk,
// memory or PID pressure or unschedulable, and (host network pods) on one
// whose network is unavailable.
func daemonTolerations(hostNetwork bool) []corev1.Toleration {
	ts := []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
	if hostNetwork {
		ts = append(ts, corev1.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	return ts
}

// AddDaemonTolerations adds the daemon tolerations to spec, each
// replacing every toleration of the same key, operator, value and effect
// (whatever its tolerationSeconds), or appended when there is none. That
// is what upstream's AddOrUpdateTolerationInPodSpec does: its check for an
// identical toleration compares a pointer with a value, so it never
// returns early.
func AddDaemonTolerations(spec *corev1.PodSpec) {
	for _, t := range daemonTolerations(spec.HostNetwork) {
		addOrUpdateToleration(spec, t)
	}
}

func addOrUpdateToleration(spec *corev1.PodSpec, t corev1.Toleration) {
	out := make([]corev1.Toleration, 0, len(spec.Tolerations)+1)
	updated := false
	for _, old := range spec.Tolerations {
		if old.MatchToleration(&t) {
			out = append(out, t)
			updated = true
			continue
		}
		out = append(out, old)
	}
	if !updated {
		out = append(out, t)
	}
	spec.Tolerations = out
}

// podTolerations are the tolerations ds's pods have: the template's and
// the daemon ones. The template is not changed.
func podTolerations(ds *appsv1.DaemonSet) []corev1.Toleration {
	spec := corev1.PodSpec{HostNetwork: ds.Spec.Template.Spec.HostNetwork,
		Tolerations: append([]corev1.Toleration(nil), ds.Spec.Template.Spec.Tolerations...)}
	AddDaemonTolerations(&spec)
	return spec.Tolerations
}

// NodeShouldRunDaemonPod says whether ds's pod belongs on node: shouldRun,
// a pod should be created there if it has none; shouldContinueRunning, a
// pod already there may stay. The template's nodeName, nodeSelector and
// required node affinity must match the node; a NoSchedule or NoExecute
// taint the pods do not tolerate keeps new pods off, and only an
// untolerated NoExecute one evicts a running pod (upstream's
// NodeShouldRunDaemonPod).
func NodeShouldRunDaemonPod(node *corev1.Node, ds *appsv1.DaemonSet) (shouldRun, shouldContinueRunning bool) {
	return nodeShouldRun(node, ds, podTolerations(ds),
		nodeaffinity.NewRequiredNodeAffinity(ds.Spec.Template.Spec.NodeSelector, ds.Spec.Template.Spec.Affinity))
}

// nodeShouldRun is NodeShouldRunDaemonPod with ds's tolerations and
// affinity worked out once for many nodes.
func nodeShouldRun(node *corev1.Node, ds *appsv1.DaemonSet, tolerations []corev1.Toleration, affinity nodeaffinity.RequiredNodeAffinity) (bool, bool) {
	if name := ds.Spec.Template.Spec.NodeName; name != "" && name != node.Name {
		return false, false
	}
	if fits, _ := affinity.Match(node); !fits {
		return false, false
	}
	if untolerated(node, tolerations, corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute) {
		return false, !untolerated(node, tolerations, corev1.TaintEffectNoExecute)
	}
	return true, true
}

// untolerated: the node has a taint of one of the effects the
// tolerations do not tolerate.
func untolerated(node *corev1.Node, tolerations []corev1.Toleration, effects ...corev1.TaintEffect) bool {
	_, found := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, tolerations, func(t *corev1.Taint) bool {
		for _, e := range effects {
			if t.Effect == e {
				return true
			}
		}
		return false
	}, false)
	return found
}

// templateGeneration is the DaemonSet's deprecated template generation
// annotation, nil when absent or not a number.
func templateGeneration(ds *appsv1.DaemonSet) *int64 {
	s, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	if !ok {
		return nil
	}
	g, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	return &g
}

// PodTemplate is the template ds's pods are made from: its own, with the
// daemon tolerations and the labels pod-template-generation (when the
// generation is known) and controller-revision-hash (when hash is set).
func PodTemplate(ds *appsv1.DaemonSet, hash string) corev1.PodTemplateSpec {
	t := *ds.Spec.Template.DeepCopy()
	AddDaemonTolerations(&t.Spec)
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	if g := templateGeneration(ds); g != nil {
		t.Labels["pod-template-generation"] = fmt.Sprint(*g)
	}
	if hash != "" {
		t.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
	}
	return t
}

// isPodUpdated: the pod is of the current revision (hash) or template
// generation.
func isPodUpdated(pod *corev1.Pod, hash string, generation *int64) bool {
	return (hash != "" && pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == hash) ||
		(generation != nil && pod.Labels["pod-template-generation"] == fmt.Sprint(*generation))
}

// WithNodeAffinity sets a's required node affinity to the one term
// matching the node by name (metadata.name in matchFields), keeping the
// rest of a (upstream's ReplaceDaemonSetPodNodeNameNodeAffinity); a may be
// nil.
func WithNodeAffinity(a *corev1.Affinity, node string) *corev1.Affinity {
	terms := []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
		{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}
	if a == nil {
		a = &corev1.Affinity{}
	}
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	if a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = terms
	return a
}

// TargetNodeName is the node a daemon pod is for: its nodeName, or the
// node its required node affinity names by metadata.name.
func TargetNodeName(pod *corev1.Pod) (string, error) {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName, nil
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return "", fmt.Errorf("no spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution for pod %s/%s", pod.Namespace, pod.Name)
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return "", fmt.Errorf("no nodeSelectorTerms in requiredDuringSchedulingIgnoredDuringExecution of pod %s/%s", pod.Namespace, pod.Name)
	}
	for _, term := range terms {
		for _, req := range term.MatchFields {
			if req.Key != metav1.ObjectNameField || req.Operator != corev1.NodeSelectorOpIn {
				continue
			}
			if len(req.Values) != 1 {
				return "", fmt.Errorf("the matchFields value of '%s' is not unique for pod %s/%s", metav1.ObjectNameField, pod.Namespace, pod.Name)
			}
			return req.Values[0], nil
		}
	}
	return "", fmt.Errorf("no node name found for pod %s/%s", pod.Namespace, pod.Name)
}

// surgeCount and unavailableCount are the rolling update's maxSurge and
// maxUnavailable for desired pods (0 for OnDelete), rounded up.
func surgeCount(ds *appsv1.DaemonSet, desired int) (int, error) {
	r := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || r == nil || r.MaxSurge == nil {
		return 0, nil
	}
	return intstr.GetScaledValueFromIntOrPercent(r.MaxSurge, desired, true)
}

func unavailableCount(ds *appsv1.DaemonSet, desired int) (int, error) {
	r := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || r == nil {
		return 0, nil
	}
	return intstr.GetScaledValueFromIntOrPercent(r.MaxUnavailable, desired, true)
}

// allowsSurge: a rolling update may run two pods on a node.
func allowsSurge(ds *appsv1.DaemonSet) bool {
	n, err := surgeCount(ds, 1)
	return err == nil && n > 0
}
