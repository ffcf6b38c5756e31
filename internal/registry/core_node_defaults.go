package registry

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// defaultNode fills what kube-apiserver fills in a Node it decodes: the
// allocatable resources, when not given, are the capacity; and the pod
// CIDRs agree with the singular podCIDR, which wins for older clients
// (upstream does the second in its conversion to the internal version,
// so it shows in every Node it serves).
func defaultNode(obj runtime.Object) {
	node := obj.(*corev1.Node)
	if node.Status.Allocatable == nil && node.Status.Capacity != nil {
		node.Status.Allocatable = node.Status.Capacity.DeepCopy()
	}
	node.Spec.PodCIDR, node.Spec.PodCIDRs = syncFirst(node.Spec.PodCIDR, node.Spec.PodCIDRs)
}

// syncFirst makes a singular field and the list it heads agree, the
// singular one authoritative: a lone singular value becomes the list, a
// lone list gives its first item, and a list whose head differs is
// replaced by the singular value.
func syncFirst(single string, list []string) (string, []string) {
	switch {
	case single == "" && len(list) > 0:
		return list[0], list
	case single != "" && (len(list) == 0 || list[0] != single):
		return single, []string{single}
	}
	return single, list
}
