package noderestriction

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The resource claim parts of a pod's status are written by the scheduler
// and the resource claim controller; a node may not change them.

func claimStatusesEqual(a, b []corev1.PodResourceClaimStatus) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.PodResourceClaimStatus) bool {
		return x.Name == y.Name && stringPtrEqual(x.ResourceClaimName, y.ResourceClaimName)
	})
}

func stringPtrEqual(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func extendedClaimStatusEqual(a, b *corev1.PodExtendedResourceClaimStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ResourceClaimName == b.ResourceClaimName && slices.Equal(a.RequestMappings, b.RequestMappings)
}

func nodeAllocatableClaimStatusesEqual(a, b []corev1.NodeAllocatableResourceClaimStatus) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.NodeAllocatableResourceClaimStatus) bool {
		return x.ResourceClaimName == y.ResourceClaimName && slices.Equal(x.Containers, y.Containers) &&
			slices.EqualFunc(x.Mapping, y.Mapping, mappedEqual) && slices.EqualFunc(x.Overhead, y.Overhead, overheadEqual)
	})
}

func mappedEqual(x, y corev1.NodeAllocatableMappedResources) bool {
	return x.Name == y.Name && resource.QuantityPtrEqual(x.Quantity, y.Quantity)
}

func overheadEqual(x, y corev1.NodeAllocatableOverheadResources) bool {
	return x.Name == y.Name && resource.QuantityPtrEqual(x.PerPod, y.PerPod) && resource.QuantityPtrEqual(x.PerContainer, y.PerContainer)
}
