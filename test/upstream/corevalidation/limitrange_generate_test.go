package corevalidation

import (
	corev1 "k8s.io/api/core/v1"
)

var (
	limitTypes = []string{"Pod", "Container", "PersistentVolumeClaim", "example.com/x", "Bogus", "bad type!", ""}
	limitNames = []string{"cpu", "memory", "storage", "ephemeral-storage", "hugepages-2Mi", "example.com/gpu", "pods",
		"bad!", "requests.cpu", "kubernetes.io/x"}
)

func (g *generator) limitRange() *corev1.LimitRange {
	lr := &corev1.LimitRange{ObjectMeta: g.meta("limits")}
	for range g.rng.Intn(3) {
		lr.Spec.Limits = append(lr.Spec.Limits, g.limitItem())
	}
	return lr
}

func (g *generator) limitItem() corev1.LimitRangeItem {
	return corev1.LimitRangeItem{Type: corev1.LimitType(g.mostly(g.pick("Pod", "Container", "PersistentVolumeClaim"), limitTypes...)),
		Max: g.resourceList(limitNames, 2), Min: g.resourceList(limitNames, 2), Default: g.resourceList(limitNames, 2),
		DefaultRequest: g.resourceList(limitNames, 2), MaxLimitRequestRatio: g.resourceList(limitNames, 1)}
}

func (g *generator) changeLimitRange(lr *corev1.LimitRange) {
	switch g.rng.Intn(3) {
	case 0:
		lr.Spec = g.limitRange().Spec
	case 1:
		lr.Spec.Limits = append(lr.Spec.Limits, g.limitItem())
	}
}
