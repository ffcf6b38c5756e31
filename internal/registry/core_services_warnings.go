package registry

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// serviceWarnings are upstream's warnings on a Service create or update
// (GetWarningsForService): deprecated annotations and fields, addresses
// in non-canonical form, and fields the Service's type ignores.
func serviceWarnings(obj, _ runtime.Object) []string {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil
	}
	spec := &svc.Spec
	var w []string
	if _, ok := svc.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]; ok {
		w = append(w, fmt.Sprintf("annotation %s is deprecated, please use %s instead",
			corev1.DeprecatedAnnotationTopologyAwareHints, corev1.AnnotationTopologyMode))
	}
	if spec.ClusterIP != "" && spec.ClusterIP != corev1.ClusterIPNone {
		for i, ip := range spec.ClusterIPs {
			w = append(w, utilvalidation.GetWarningsForIP(field.NewPath("spec", "clusterIPs").Index(i), ip)...)
		}
	}
	headless := spec.Type == corev1.ServiceTypeClusterIP && spec.ClusterIP == corev1.ClusterIPNone
	if headless {
		if spec.LoadBalancerIP != "" {
			w = append(w, "spec.loadBalancerIP is ignored for headless services")
		}
		if len(spec.ExternalIPs) > 0 {
			w = append(w, "spec.externalIPs is ignored for headless services")
		}
		if spec.SessionAffinity != corev1.ServiceAffinityNone {
			w = append(w, "spec.SessionAffinity is ignored for headless services")
		}
	}
	for i, ip := range spec.ExternalIPs {
		w = append(w, utilvalidation.GetWarningsForIP(field.NewPath("spec", "externalIPs").Index(i), ip)...)
	}
	if len(spec.ExternalIPs) > 0 && !headless && spec.Type != corev1.ServiceTypeExternalName {
		w = append(w, "spec.externalIPs is deprecated and may no longer be implemented in some clusters")
	}
	if spec.LoadBalancerIP != "" {
		w = append(w, utilvalidation.GetWarningsForIP(field.NewPath("spec", "loadBalancerIP"), spec.LoadBalancerIP)...)
	}
	for i, cidr := range spec.LoadBalancerSourceRanges {
		w = append(w, utilvalidation.GetWarningsForCIDR(field.NewPath("spec", "loadBalancerSourceRanges").Index(i), cidr)...)
	}
	if spec.Type == corev1.ServiceTypeExternalName && len(spec.ExternalIPs) > 0 {
		w = append(w, fmt.Sprintf("spec.externalIPs is ignored when spec.type is %q", corev1.ServiceTypeExternalName))
	}
	if spec.Type != corev1.ServiceTypeExternalName && spec.ExternalName != "" {
		w = append(w, fmt.Sprintf("spec.externalName is ignored when spec.type is not %q", corev1.ServiceTypeExternalName))
	}
	if spec.TrafficDistribution != nil && *spec.TrafficDistribution == corev1.ServiceTrafficDistributionPreferClose {
		w = append(w, fmt.Sprintf("spec.trafficDistribution: %q is deprecated; use %q",
			corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone))
	}
	return w
}
