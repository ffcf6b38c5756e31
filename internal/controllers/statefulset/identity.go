package statefulset

import (
	"fmt"
	"regexp"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/controllers/replicaset"
)

// memberName matches a member pod's name: "<set>-<ordinal>".
var memberName = regexp.MustCompile(`^(.*)-([0-9]+)$`)

// ParentAndOrdinal splits a pod name "<set>-<ordinal>" into the set's name
// and the ordinal; a name of another form has parent "" and ordinal -1, as
// does one whose number does not fit an int32 (its parent is kept).
func ParentAndOrdinal(podName string) (parent string, ordinal int) {
	m := memberName.FindStringSubmatch(podName)
	if m == nil {
		return "", -1
	}
	n, err := strconv.ParseInt(m[2], 10, 32)
	if err != nil {
		return m[1], -1
	}
	return m[1], int(n)
}

// ordinalOf is the pod's ordinal, -1 when its name has none.
func ordinalOf(pod *corev1.Pod) int {
	_, ord := ParentAndOrdinal(pod.Name)
	return ord
}

// StartOrdinal is the set's first ordinal (spec.ordinals.start, else 0).
func StartOrdinal(set *appsv1.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

// EndOrdinal is the set's last ordinal, inclusive.
func EndOrdinal(set *appsv1.StatefulSet) int {
	return StartOrdinal(set) + int(replicasOf(set)) - 1
}

func replicasOf(set *appsv1.StatefulSet) int32 {
	if set.Spec.Replicas == nil {
		return 1
	}
	return *set.Spec.Replicas
}

// inOrdinalRange: the pod's ordinal is one the set keeps.
func inOrdinalRange(pod *corev1.Pod, set *appsv1.StatefulSet) bool {
	ord := ordinalOf(pod)
	return ord >= StartOrdinal(set) && ord <= EndOrdinal(set)
}

// PodName is the name of the set's pod of ordinal.
func PodName(set *appsv1.StatefulSet, ordinal int) string {
	return fmt.Sprintf("%s-%d", set.Name, ordinal)
}

// ClaimName is the name of the claim made from template for the pod of
// ordinal: "<template>-<set>-<ordinal>".
func ClaimName(set *appsv1.StatefulSet, template *corev1.PersistentVolumeClaim, ordinal int) string {
	return fmt.Sprintf("%s-%s-%d", template.Name, set.Name, ordinal)
}

// isMemberOf: the pod's name says it belongs to set.
func isMemberOf(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	parent, _ := ParentAndOrdinal(pod.Name)
	return parent == set.Name
}

// identityMatches: the pod has the name, namespace and pod-name label of
// a member of set.
func identityMatches(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	parent, ord := ParentAndOrdinal(pod.Name)
	return ord >= 0 && parent == set.Name && pod.Name == PodName(set, ord) && pod.Namespace == set.Namespace &&
		pod.Labels[appsv1.StatefulSetPodNameLabel] == pod.Name
}

// storageMatches: the pod mounts, under each claim template's name, the
// claim of its ordinal.
func storageMatches(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	ord := ordinalOf(pod)
	if ord < 0 {
		return false
	}
	volumes := make(map[string]corev1.Volume, len(pod.Spec.Volumes))
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	for i := range set.Spec.VolumeClaimTemplates {
		t := &set.Spec.VolumeClaimTemplates[i]
		v, ok := volumes[t.Name]
		if !ok || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != ClaimName(set, t, ord) {
			return false
		}
	}
	return true
}

// Claims are the claims the pod of set needs, by template name: each
// template named for the pod's ordinal, in the set's namespace, with the
// selector's matchLabels added to its labels.
func Claims(set *appsv1.StatefulSet, pod *corev1.Pod) map[string]corev1.PersistentVolumeClaim {
	ord := ordinalOf(pod)
	claims := make(map[string]corev1.PersistentVolumeClaim, len(set.Spec.VolumeClaimTemplates))
	for i := range set.Spec.VolumeClaimTemplates {
		t := &set.Spec.VolumeClaimTemplates[i]
		claim := t.DeepCopy()
		claim.Name = ClaimName(set, t, ord)
		claim.Namespace = set.Namespace
		var match map[string]string
		if set.Spec.Selector != nil {
			match = set.Spec.Selector.MatchLabels
		}
		if claim.Labels == nil && match != nil {
			claim.Labels = make(map[string]string, len(match))
		}
		for k, v := range match {
			claim.Labels[k] = v
		}
		claims[t.Name] = *claim
	}
	return claims
}

// updateStorage makes the pod mount its claims: one volume per template
// (replacing a volume of that name), then the pod's other volumes.
func updateStorage(set *appsv1.StatefulSet, pod *corev1.Pod) {
	claims := Claims(set, pod)
	volumes := make([]corev1.Volume, 0, len(claims)+len(pod.Spec.Volumes))
	for i := range set.Spec.VolumeClaimTemplates {
		name := set.Spec.VolumeClaimTemplates[i].Name
		claim, ok := claims[name]
		if !ok {
			continue
		}
		delete(claims, name) // a repeated template name mounts once
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}})
	}
	templates := map[string]bool{}
	for i := range set.Spec.VolumeClaimTemplates {
		templates[set.Spec.VolumeClaimTemplates[i].Name] = true
	}
	for _, v := range pod.Spec.Volumes {
		if !templates[v.Name] {
			volumes = append(volumes, v)
		}
	}
	pod.Spec.Volumes = volumes
}

// updateIdentity gives the pod its member name, namespace, pod-name and
// pod-index labels.
func updateIdentity(set *appsv1.StatefulSet, pod *corev1.Pod) {
	ord := ordinalOf(pod)
	pod.Name = PodName(set, ord)
	pod.Namespace = set.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.StatefulSetPodNameLabel] = pod.Name
	pod.Labels[appsv1.PodIndexLabel] = strconv.Itoa(ord)
}

// NewPod is the pod of ordinal that set creates from its template: named
// "<set>-<ordinal>" (generateName "<set>-" as every controller's pod),
// controlled by set, with hostname its name and subdomain the set's
// serviceName, its identity labels and its claims mounted.
func NewPod(set *appsv1.StatefulSet, ordinal int) *corev1.Pod {
	pod := replicaset.PodFromTemplate(&set.Spec.Template, set.Name, *metav1.NewControllerRef(set, controllerKind))
	pod.Name = PodName(set, ordinal)
	updateIdentity(set, pod)
	pod.Spec.Hostname = pod.Name
	pod.Spec.Subdomain = set.Spec.ServiceName
	updateStorage(set, pod)
	return pod
}

// NewVersionedPod is the pod of ordinal as of the revision it should have:
// below the partition (or, without a rollingUpdate, below the current
// replicas) the current revision's, else the update revision's; the
// controller-revision-hash label names it.
func NewVersionedPod(currentSet, updateSet *appsv1.StatefulSet, currentRevision, updateRevision string, ordinal int) *corev1.Pod {
	strategy := currentSet.Spec.UpdateStrategy
	start := StartOrdinal(currentSet)
	useCurrent := false
	if strategy.RollingUpdate == nil {
		useCurrent = strategy.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
			ordinal < start+int(currentSet.Status.CurrentReplicas)
	} else if strategy.RollingUpdate.Partition != nil {
		useCurrent = ordinal < start+int(*strategy.RollingUpdate.Partition)
	}
	if useCurrent {
		pod := NewPod(currentSet, ordinal)
		setPodRevision(pod, currentRevision)
		return pod
	}
	pod := NewPod(updateSet, ordinal)
	setPodRevision(pod, updateRevision)
	return pod
}

func setPodRevision(pod *corev1.Pod, revision string) {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.StatefulSetRevisionLabel] = revision
}

func podRevision(pod *corev1.Pod) string { return pod.Labels[appsv1.StatefulSetRevisionLabel] }
