package registry

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Endpoints validation, as upstream's ValidateEndpointsCreate and
// ValidateEndpointsUpdate: every subset has an address, ready or not; an
// address is a legacy IP (strict under StrictIPCIDRValidation, on by
// default) that is not unspecified, loopback or link-local, with an
// optional DNS-label hostname and DNS-subdomain nodeName; a port has a
// number, a protocol and a DNS-label name, required when the subset has
// more than one port. targetRef is not checked.
//
// An update whose subsets are unchanged keeps them even when they no
// longer pass: older servers accepted them.

var subsetsPath = field.NewPath("subsets")

func validateEndpoints(obj runtime.Object) field.ErrorList {
	return validateEndpointSubsets(obj.(*corev1.Endpoints).Subsets)
}

func validateEndpointsUpdate(obj, old runtime.Object) field.ErrorList {
	errs := validateEndpoints(obj)
	if len(errs) > 0 && equality.Semantic.DeepEqual(obj.(*corev1.Endpoints).Subsets, old.(*corev1.Endpoints).Subsets) {
		return nil
	}
	return errs
}

func validateEndpointSubsets(subsets []corev1.EndpointSubset) field.ErrorList {
	var errs field.ErrorList
	for i := range subsets {
		s, p := &subsets[i], subsetsPath.Index(i)
		if len(s.Addresses) == 0 && len(s.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(p, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range s.Addresses {
			errs = append(errs, validateEndpointAddress(&s.Addresses[j], p.Child("addresses").Index(j))...)
		}
		for j := range s.NotReadyAddresses {
			errs = append(errs, validateEndpointAddress(&s.NotReadyAddresses[j], p.Child("notReadyAddresses").Index(j))...)
		}
		for j := range s.Ports {
			errs = append(errs, validateEndpointPort(&s.Ports[j], len(s.Ports) > 1, p.Child("ports").Index(j))...)
		}
	}
	return errs
}

// validateEndpointAddress checks the IP twice, as upstream does: once as a
// legacy IP, then for the ranges an endpoint may not use (so an IP the
// first refuses may be refused again).
func validateEndpointAddress(a *corev1.EndpointAddress, p *field.Path) field.ErrorList {
	strict := (defaultGates{}).Enabled(gateStrictIPCIDRValidation)
	errs := validation.IsValidIPForLegacyField(p.Child("ip"), a.IP, strict, nil)
	if a.Hostname != "" {
		errs = append(errs, dns1123Label(a.Hostname, p.Child("hostname"))...)
	}
	if a.NodeName != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*a.NodeName, false) {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *a.NodeName, msg).WithOrigin("format=dns-label"))
		}
	}
	return append(errs, validateNonSpecialIP(a.IP, p.Child("ip"))...)
}

func validateEndpointPort(port *corev1.EndpointPort, requireName bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && port.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if port.Name != "" {
		errs = append(errs, dns1123Label(port.Name, p.Child("name"))...)
	}
	for _, msg := range validation.IsValidPortNum(int(port.Port)) {
		errs = append(errs, field.Invalid(p.Child("port"), port.Port, msg).WithOrigin("portNum"))
	}
	errs = append(errs, validateProtocol(port.Protocol, p.Child("protocol"))...)
	if port.AppProtocol != nil {
		errs = append(errs, qualifiedName(*port.AppProtocol, p.Child("appProtocol"))...)
	}
	return errs
}
