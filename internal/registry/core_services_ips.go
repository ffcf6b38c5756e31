package registry

import (
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// clusterIP / clusterIPs / ipFamilies / ipFamilyPolicy validation (upstream
// ValidateServiceClusterIPsRelatedFields and the update rules).

const mayNotChangeMsg = "may not change once set"

// validateClusterIPFields checks the IP fields against each other.
func validateClusterIPFields(svc *corev1.Service) field.ErrorList {
	spec := &svc.Spec
	if spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	ipsPath, famPath := specPath.Child("clusterIPs"), specPath.Child("ipFamilies")
	if spec.ClusterIP != "" {
		if len(spec.ClusterIPs) == 0 {
			errs = append(errs, field.Required(ipsPath, ""))
		} else if spec.ClusterIPs[0] != spec.ClusterIP {
			errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(spec.ClusterIPs) != 0 {
		errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	seen := sets.New[corev1.IPFamily]()
	for i, f := range spec.IPFamilies {
		if f != corev1.IPv4Protocol && f != corev1.IPv6Protocol {
			errs = append(errs, field.NotSupported(famPath.Index(i), f, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}))
		}
		if seen.Has(f) {
			errs = append(errs, field.Duplicate(famPath.Index(i), f))
		}
		seen.Insert(f)
	}
	if p := spec.IPFamilyPolicy; p != nil {
		switch *p {
		case corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack:
		default:
			errs = append(errs, field.NotSupported(specPath.Child("ipFamilyPolicy"), p,
				[]corev1.IPFamilyPolicy{corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack, corev1.IPFamilyPolicySingleStack}))
		}
	}
	invalidIPs := false
	for i, ip := range spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(spec.ClusterIPs) > 1 {
				invalidIPs = true
				errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		e := validation.IsValidIP(ipsPath.Index(i), ip)
		invalidIPs = invalidIPs || len(e) > 0
		errs = append(errs, e...)
	}
	if len(spec.ClusterIPs) > 2 {
		errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "may only hold up to 2 values"))
	}
	if invalidIPs {
		return errs
	}
	if len(spec.ClusterIPs) > 1 && isIPv6(spec.ClusterIPs[0]) == isIPv6(spec.ClusterIPs[1]) {
		errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "may specify no more than one IP for each IP family"))
	}
	if !isHeadless(svc) {
		for i, ip := range spec.ClusterIPs {
			if i >= len(spec.IPFamilies) {
				break
			}
			if spec.IPFamilies[i] == corev1.IPv4Protocol && isIPv6(ip) {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if spec.IPFamilies[i] == corev1.IPv6Protocol && !isIPv6(ip) {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return errs
}

func isIPv6(ip string) bool {
	parsed := net.ParseIP(ip)
	return parsed != nil && parsed.To4() == nil
}

func validateServiceUpdate(obj, old runtime.Object) field.ErrorList {
	svc, oldSvc := obj.(*corev1.Service), old.(*corev1.Service)
	var errs field.ErrorList
	if svc.Spec.Type != corev1.ServiceTypeExternalName && oldSvc.Spec.Type != corev1.ServiceTypeExternalName {
		if !(isHeadless(svc) && isHeadless(oldSvc)) {
			errs = append(errs, validateListUpgrade(oldSvc.Spec.ClusterIPs, svc.Spec.ClusterIPs, svc, "clusterIPs", "clusterIP")...)
		}
		if isHeadless(svc) == isHeadless(oldSvc) && !isHeadless(svc) {
			errs = append(errs, validateListUpgrade(familyStrings(oldSvc.Spec.IPFamilies), familyStrings(svc.Spec.IPFamilies), svc, "ipFamilies", "ipFamily")...)
		}
	}
	oldLB, newLB := oldSvc.Spec.Type == corev1.ServiceTypeLoadBalancer, svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	if oldLB && newLB && !equalStringPtr(oldSvc.Spec.LoadBalancerClass, svc.Spec.LoadBalancerClass) {
		errs = append(errs, field.Invalid(specPath.Child("loadBalancerClass"), svc.Spec.LoadBalancerClass, mayNotChangeMsg))
	}
	if needsHealthCheck(&oldSvc.Spec) && needsHealthCheck(&svc.Spec) && svc.Spec.HealthCheckNodePort != oldSvc.Spec.HealthCheckNodePort {
		errs = append(errs, field.Forbidden(specPath.Child("healthCheckNodePort"), "field is immutable"))
	}
	return append(errs, validateService(obj)...)
}

// validateListUpgrade allows adding or releasing the secondary value of a
// dual-stack list (cluster IPs, IP families) but never changing the primary.
func validateListUpgrade(oldList, newList []string, svc *corev1.Service, name, noun string) field.ErrorList {
	first := specPath.Child(name).Index(0)
	var errs field.ErrorList
	switch {
	case len(oldList) == len(newList):
		for i := range oldList {
			if oldList[i] != newList[i] {
				errs = append(errs, field.Invalid(first, newList, mayNotChangeMsg))
			}
		}
	case len(oldList) > len(newList):
		if len(newList) == 0 {
			errs = append(errs, field.Invalid(first, newList, fmt.Sprintf("primary %s can not be unset", noun)))
		} else if newList[0] != oldList[0] {
			errs = append(errs, field.Invalid(first, newList, mayNotChangeMsg))
		}
		if len(newList) == 1 && (svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), svc.Spec.ClusterIPs,
				fmt.Sprintf("`ipFamilyPolicy` must be set to 'SingleStack' when releasing the secondary %s", noun)))
		}
	default:
		if len(oldList) > 0 && newList[0] != oldList[0] {
			errs = append(errs, field.Invalid(first, newList, mayNotChangeMsg))
		}
	}
	return errs
}

func familyStrings(families []corev1.IPFamily) []string {
	out := make([]string, len(families))
	for i, f := range families {
		out[i] = string(f)
	}
	return out
}

func needsHealthCheck(spec *corev1.ServiceSpec) bool {
	return spec.Type == corev1.ServiceTypeLoadBalancer && spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

func equalStringPtr(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
