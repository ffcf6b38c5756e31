package registry

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateIngressStatusUpdate checks a write through ingresses/status as
// upstream's ValidateIngressStatusUpdate: the metadata change, then each
// load balancer ingress point's IP (the legacy parser's forms refused
// under StrictIPCIDRValidation, but for IPs already stored) and DNS
// hostname. The spec is the stored one and not checked again.
func validateIngressStatusUpdate(obj, old runtime.Object, gates FeatureGates) field.ErrorList {
	in, was := obj.(*networkingv1.Ingress), old.(*networkingv1.Ingress)
	errs := ValidateObjectMetaUpdate(obj, old)
	var storedIPs []string
	for _, point := range was.Status.LoadBalancer.Ingress {
		if point.IP != "" {
			storedIPs = append(storedIPs, point.IP)
		}
	}
	strict := gates.Enabled(gateStrictIPCIDRValidation)
	p := field.NewPath("status", "loadBalancer", "ingress")
	for i, point := range in.Status.LoadBalancer.Ingress {
		if point.IP != "" {
			errs = append(errs, validation.IsValidIPForLegacyField(p.Index(i).Child("ip"), point.IP, strict, storedIPs)...)
		}
		if point.Hostname != "" {
			errs = append(errs, loadBalancerHostnameErrors(point.Hostname, p.Index(i).Child("hostname"))...)
		}
	}
	return errs
}
