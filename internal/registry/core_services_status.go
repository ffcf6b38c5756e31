package registry

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// gateStrictIPCIDRValidation makes legacy IP and CIDR fields refuse the forms
// (leading zeros, IPv4-mapped IPv6) the old parser took, except values
// already stored.
const gateStrictIPCIDRValidation = "StrictIPCIDRValidation"

var supportedLoadBalancerIPModes = []string{string(corev1.LoadBalancerIPModeProxy), string(corev1.LoadBalancerIPModeVIP)}

// validateServiceStatusUpdate checks a write through services/status as
// upstream's ValidateServiceStatusUpdate: the metadata change and the load
// balancer status against the stored spec; the spec itself is not checked
// again.
func validateServiceStatusUpdate(obj, old runtime.Object, gates FeatureGates) field.ErrorList {
	svc, was := obj.(*corev1.Service), old.(*corev1.Service)
	errs := ValidateObjectMetaUpdate(obj, old)
	return append(errs, validateLoadBalancerStatus(&svc.Status.LoadBalancer, &was.Status.LoadBalancer, &svc.Spec, gates)...)
}

// validateLoadBalancerStatus: ingress points only for a LoadBalancer
// Service, each with a valid IP (one already there passes as it is) and
// its mode, or a DNS hostname.
func validateLoadBalancerStatus(status, old *corev1.LoadBalancerStatus, spec *corev1.ServiceSpec, gates FeatureGates) field.ErrorList {
	p := field.NewPath("status", "loadBalancer", "ingress")
	if spec.Type != corev1.ServiceTypeLoadBalancer && len(status.Ingress) != 0 {
		return field.ErrorList{field.Forbidden(p, "may only be used when `spec.type` is 'LoadBalancer'")}
	}
	var oldIPs []string
	for _, in := range old.Ingress {
		if in.IP != "" {
			oldIPs = append(oldIPs, in.IP)
		}
	}
	var errs field.ErrorList
	for i, in := range status.Ingress {
		errs = append(errs, validateLoadBalancerIngress(in, oldIPs, p.Index(i), gates)...)
	}
	return errs
}

func validateLoadBalancerIngress(in corev1.LoadBalancerIngress, oldIPs []string, p *field.Path, gates FeatureGates) field.ErrorList {
	var errs field.ErrorList
	if in.IP != "" {
		errs = append(errs, validation.IsValidIPForLegacyField(p.Child("ip"), in.IP, gates.Enabled(gateStrictIPCIDRValidation), oldIPs)...)
	}
	switch {
	case in.IPMode == nil && in.IP != "":
		errs = append(errs, field.Required(p.Child("ipMode"), "must be specified when `ip` is set"))
	case in.IPMode != nil && in.IP == "":
		errs = append(errs, field.Forbidden(p.Child("ipMode"), "may not be specified when `ip` is not set"))
	case in.IPMode != nil && *in.IPMode != corev1.LoadBalancerIPModeProxy && *in.IPMode != corev1.LoadBalancerIPModeVIP:
		errs = append(errs, field.NotSupported(p.Child("ipMode"), in.IPMode, supportedLoadBalancerIPModes))
	}
	if in.Hostname != "" {
		errs = append(errs, loadBalancerHostnameErrors(in.Hostname, p.Child("hostname"))...)
	}
	return errs
}

// loadBalancerHostnameErrors: a load balancer's hostname (a Service's or
// an Ingress's) is a DNS name, not an IP address.
func loadBalancerHostnameErrors(hostname string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(hostname) {
		errs = append(errs, field.Invalid(p, hostname, msg))
	}
	if netutils.ParseIPSloppy(hostname) != nil {
		errs = append(errs, field.Invalid(p, hostname, "must be a DNS name, not an IP address"))
	}
	return errs
}
