package controllers

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/ephemeral"

	"github.com/admitd/admitd/internal/controllers/watchcache"
)

// podControllerIndex is the index of a pod cache by the pod's controller,
// upstream's controller.PodControllerIndex: the ReplicaSet, Deployment,
// Job, DaemonSet and StatefulSet controllers find their pods through it
// instead of reading every pod of the namespace on each sync.
const podControllerIndex = "podController"

// IndexPodsByController adds the controller index to a pod cache (once,
// however many controllers share the cache).
func IndexPodsByController(pods *watchcache.Cache[*corev1.Pod]) {
	pods.AddIndex(podControllerIndex, func(p *corev1.Pod) []string {
		return []string{podControllerKey(p.Namespace, metav1.GetControllerOfNoCopy(p))}
	})
}

// podControllerKey is the index key of the pods of namespace whose
// controller is ref: "<namespace>/<kind>/<name>/<uid>", or "<namespace>"
// for the pods no controller controls (upstream's PodControllerIndexKey).
func podControllerKey(namespace string, ref *metav1.OwnerReference) string {
	if ref == nil {
		return namespace
	}
	return namespace + "/" + ref.Kind + "/" + ref.Name + "/" + string(ref.UID)
}

// PodsOfController returns the pods owner, of kind ownerKind, controls and,
// with orphans, the pods of its namespace without a controller, which it
// may adopt (upstream's FilterPodsByOwner). The pods are the cache's,
// shared: copy one before changing it. The cache must have the index
// (IndexPodsByController).
func PodsOfController(pods *watchcache.Cache[*corev1.Pod], owner metav1.Object, ownerKind string, orphans bool) []*corev1.Pod {
	ref := &metav1.OwnerReference{Kind: ownerKind, Name: owner.GetName(), UID: owner.GetUID()}
	out := pods.ByIndex(podControllerIndex, podControllerKey(owner.GetNamespace(), ref))
	if orphans {
		out = append(out, pods.ByIndex(podControllerIndex, podControllerKey(owner.GetNamespace(), nil))...)
	}
	return out
}

// podNodeIndex is the index of a pod cache by spec.nodeName (none for an
// unbound pod), upstream's PodNodeNameKeyIndex: the node lifecycle and
// taint eviction controllers find a node's pods through it.
const podNodeIndex = "spec.nodeName"

// IndexPodsByNode adds the node index to a pod cache (once, however many
// controllers share the cache).
func IndexPodsByNode(pods *watchcache.Cache[*corev1.Pod]) {
	pods.AddIndex(podNodeIndex, func(p *corev1.Pod) []string {
		if p.Spec.NodeName == "" {
			return nil
		}
		return []string{p.Spec.NodeName}
	})
}

// PodsOnNode returns the pods bound to node, shared with the cache: copy
// one before changing it. The cache must have the index (IndexPodsByNode).
func PodsOnNode(pods *watchcache.Cache[*corev1.Pod], node string) []*corev1.Pod {
	return pods.ByIndex(podNodeIndex, node)
}

// podClaimIndex is the index of a pod cache by the claims its volumes name
// or create, "<namespace>/<claim>" (upstream's PodPVCIndex): the
// ephemeral volume and persistent volume binder controllers find a claim's
// pods through it.
const podClaimIndex = "pod-pvc-index"

// IndexPodsByClaim adds the claim index to a pod cache (once, however many
// controllers share the cache).
func IndexPodsByClaim(pods *watchcache.Cache[*corev1.Pod]) {
	pods.AddIndex(podClaimIndex, podClaimKeys)
}

func podClaimKeys(pod *corev1.Pod) []string {
	var keys []string
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		switch {
		case vol.PersistentVolumeClaim != nil:
			keys = append(keys, pod.Namespace+"/"+vol.PersistentVolumeClaim.ClaimName)
		case vol.Ephemeral != nil:
			keys = append(keys, pod.Namespace+"/"+ephemeral.VolumeClaimName(pod, vol))
		}
	}
	return keys
}

// PodsUsingClaim returns the pods whose volumes name or create the claim
// namespace/name, shared with the cache: copy one before changing it. The
// cache must have the index (IndexPodsByClaim).
func PodsUsingClaim(pods *watchcache.Cache[*corev1.Pod], namespace, name string) []*corev1.Pod {
	return pods.ByIndex(podClaimIndex, namespace+"/"+name)
}
