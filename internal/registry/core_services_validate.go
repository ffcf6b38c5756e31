package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// Service validation (upstream ValidateService, ValidateServiceUpdate and
// ValidateServiceClusterIPsRelatedFields).

const (
	notLoadBalancerMsg = "may only be used when `type` is 'LoadBalancer'"
	// maxClientIPAffinitySeconds is upstream's MaxClientIPServiceAffinitySeconds
	// (one day).
	maxClientIPAffinitySeconds = 86400
)

var supportedServiceTypes = []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeExternalName, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort}

func isHeadless(s *corev1.Service) bool {
	return len(s.Spec.ClusterIPs) == 1 && s.Spec.ClusterIPs[0] == corev1.ClusterIPNone
}

func validateService(obj runtime.Object) field.ErrorList {
	svc := obj.(*corev1.Service)
	spec := &svc.Spec
	var errs field.ErrorList
	if len(spec.Ports) == 0 && !isHeadless(svc) && spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(specPath.Child("ports"), ""))
	}
	errs = append(errs, validateServiceTypeFields(svc)...)
	names := sets.New[string]()
	for i := range spec.Ports {
		errs = append(errs, validateServicePort(&spec.Ports[i], len(spec.Ports) > 1, names, specPath.Child("ports").Index(i))...)
	}
	if spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabels(spec.Selector, specPath.Child("selector"))...)
	}
	errs = append(errs, validateSessionAffinity(spec)...)
	errs = append(errs, validateClusterIPFields(svc)...)
	for i, ip := range spec.ExternalIPs {
		p := specPath.Child("externalIPs").Index(i)
		if e := validation.IsValidIP(p, ip); len(e) > 0 {
			errs = append(errs, e...)
		} else {
			errs = append(errs, validateNonSpecialIP(ip, p)...)
		}
	}
	switch spec.Type {
	case "":
		errs = append(errs, field.Required(specPath.Child("type"), ""))
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName:
	default:
		errs = append(errs, field.NotSupported(specPath.Child("type"), spec.Type, supportedServiceTypes))
	}
	errs = append(errs, validateServicePortUniqueness(spec)...)
	errs = append(errs, validateLoadBalancerFields(svc)...)
	errs = append(errs, validateTrafficPolicies(spec)...)
	return errs
}

// validateServiceTypeFields checks what each service type rules out.
func validateServiceTypeFields(svc *corev1.Service) field.ErrorList {
	spec := &svc.Spec
	var errs field.ErrorList
	switch spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		if isHeadless(svc) {
			errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), spec.ClusterIPs[0], fmt.Sprintf("may not be set to 'None' for %s services", spec.Type)))
		}
	case corev1.ServiceTypeExternalName:
		for _, f := range []struct {
			set  bool
			name string
		}{{len(spec.ClusterIPs) > 0, "clusterIPs"}, {len(spec.IPFamilies) > 0, "ipFamilies"}, {spec.IPFamilyPolicy != nil, "ipFamilyPolicy"}} {
			if f.set {
				errs = append(errs, field.Forbidden(specPath.Child(f.name), "may not be set for ExternalName services"))
			}
		}
		if cname := strings.TrimSuffix(spec.ExternalName, "."); cname != "" {
			errs = append(errs, dns1123Subdomain(cname, specPath.Child("externalName"))...)
		} else {
			errs = append(errs, field.Required(specPath.Child("externalName"), ""))
		}
	}
	return errs
}

func validateServicePort(sp *corev1.ServicePort, requireName bool, names sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && sp.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else if sp.Name != "" {
		errs = append(errs, dns1123Label(sp.Name, path.Child("name"))...)
		if names.Has(sp.Name) {
			errs = append(errs, field.Duplicate(path.Child("name"), sp.Name))
		}
		names.Insert(sp.Name)
	}
	for _, msg := range validation.IsValidPortNum(int(sp.Port)) {
		errs = append(errs, field.Invalid(path.Child("port"), sp.Port, msg))
	}
	errs = append(errs, validateProtocol(sp.Protocol, path.Child("protocol"))...)
	errs = append(errs, validatePortNumOrName(sp.TargetPort, path.Child("targetPort"))...)
	if sp.AppProtocol != nil {
		errs = append(errs, qualifiedName(*sp.AppProtocol, path.Child("appProtocol"))...)
	}
	return errs
}

func validateSessionAffinity(spec *corev1.ServiceSpec) field.ErrorList {
	path := specPath.Child("sessionAffinity")
	switch spec.SessionAffinity {
	case "":
		return field.ErrorList{field.Required(path, "")}
	case corev1.ServiceAffinityNone:
		if spec.SessionAffinityConfig != nil {
			return field.ErrorList{field.Forbidden(specPath.Child("sessionAffinityConfig"), fmt.Sprintf("must not be set when session affinity is %s", corev1.ServiceAffinityNone))}
		}
		return nil
	case corev1.ServiceAffinityClientIP:
		cfgPath := specPath.Child("sessionAffinityConfig")
		why := fmt.Sprintf("when session affinity type is %s", corev1.ServiceAffinityClientIP)
		c := spec.SessionAffinityConfig
		switch {
		case c == nil:
			return field.ErrorList{field.Required(cfgPath, why)}
		case c.ClientIP == nil:
			return field.ErrorList{field.Required(cfgPath.Child("clientIP"), why)}
		case c.ClientIP.TimeoutSeconds == nil:
			return field.ErrorList{field.Required(cfgPath.Child("clientIP", "timeoutSeconds"), why)}
		case *c.ClientIP.TimeoutSeconds <= 0 || *c.ClientIP.TimeoutSeconds > maxClientIPAffinitySeconds:
			return field.ErrorList{field.Invalid(cfgPath.Child("clientIP", "timeoutSeconds"), c.ClientIP.TimeoutSeconds,
				fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPAffinitySeconds))}
		}
		return nil
	}
	return field.ErrorList{field.NotSupported(path, spec.SessionAffinity, []corev1.ServiceAffinity{corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone})}
}

// validateServicePortUniqueness rejects nodePorts on ClusterIP services and
// duplicate (protocol, nodePort) and (protocol, port) pairs.
func validateServicePortUniqueness(spec *corev1.ServiceSpec) field.ErrorList {
	var errs field.ErrorList
	portsPath := specPath.Child("ports")
	if spec.Type == corev1.ServiceTypeClusterIP {
		for i := range spec.Ports {
			if spec.Ports[i].NodePort != 0 {
				errs = append(errs, field.Forbidden(portsPath.Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}
	nodePorts := map[corev1.ServicePort]bool{}
	for i, p := range spec.Ports {
		if p.NodePort == 0 {
			continue
		}
		key := corev1.ServicePort{Protocol: p.Protocol, NodePort: p.NodePort}
		if nodePorts[key] {
			errs = append(errs, field.Duplicate(portsPath.Index(i).Child("nodePort"), p.NodePort))
		}
		nodePorts[key] = true
	}
	ports := map[internalServicePort]bool{}
	for i, p := range spec.Ports {
		key := internalServicePort{Protocol: p.Protocol, Port: p.Port}
		if ports[key] {
			errs = append(errs, field.Duplicate(portsPath.Index(i), key))
		}
		ports[key] = true
	}
	return errs
}

// internalServicePort has the shape of upstream's internal ServicePort (no
// json tags), so a duplicate port renders in errors exactly as upstream's.
type internalServicePort struct {
	Name        string
	Protocol    corev1.Protocol
	AppProtocol *string
	Port        int32
	TargetPort  intstr.IntOrString
	NodePort    int32
}

func validateLoadBalancerFields(svc *corev1.Service) field.ErrorList {
	spec := &svc.Spec
	isLB := spec.Type == corev1.ServiceTypeLoadBalancer
	var errs field.ErrorList
	if len(spec.LoadBalancerSourceRanges) > 0 {
		p := specPath.Child("LoadBalancerSourceRanges")
		if !isLB {
			errs = append(errs, field.Forbidden(p, notLoadBalancerMsg))
		}
		for i, v := range spec.LoadBalancerSourceRanges {
			errs = append(errs, validation.IsValidCIDR(p.Index(i), strings.TrimSpace(v))...)
		}
	} else if v, ok := svc.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey]; ok {
		p := metadataPath.Child("annotations").Key(corev1.AnnotationLoadBalancerSourceRangesKey)
		if !isLB {
			errs = append(errs, field.Forbidden(p, notLoadBalancerMsg))
		}
		if v = strings.TrimSpace(v); v != "" {
			for _, cidr := range strings.Split(v, ",") {
				errs = append(errs, validation.IsValidCIDR(p, strings.TrimSpace(cidr))...)
			}
		}
	}
	if spec.AllocateLoadBalancerNodePorts != nil && !isLB {
		errs = append(errs, field.Forbidden(specPath.Child("allocateLoadBalancerNodePorts"), notLoadBalancerMsg))
	}
	if isLB && spec.AllocateLoadBalancerNodePorts == nil {
		errs = append(errs, field.Required(field.NewPath("allocateLoadBalancerNodePorts"), ""))
	}
	if c := spec.LoadBalancerClass; c != nil {
		if isLB {
			errs = append(errs, qualifiedName(*c, specPath.Child("loadBalancerClass"))...)
		} else {
			errs = append(errs, field.Forbidden(specPath.Child("loadBalancerClass"), notLoadBalancerMsg))
		}
	}
	return errs
}

func validateTrafficPolicies(spec *corev1.ServiceSpec) field.ErrorList {
	var errs field.ErrorList
	etp := specPath.Child("externalTrafficPolicy")
	if !externallyAccessible(spec) {
		if spec.ExternalTrafficPolicy != "" {
			errs = append(errs, field.Invalid(etp, spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
		}
	} else if spec.ExternalTrafficPolicy == "" {
		errs = append(errs, field.Required(etp, ""))
	} else if spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster && spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal {
		errs = append(errs, field.NotSupported(etp, spec.ExternalTrafficPolicy,
			[]corev1.ServiceExternalTrafficPolicy{corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal}))
	}
	hc := specPath.Child("healthCheckNodePort")
	needsHC := spec.Type == corev1.ServiceTypeLoadBalancer && spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
	if !needsHC && spec.HealthCheckNodePort != 0 {
		errs = append(errs, field.Invalid(hc, spec.HealthCheckNodePort, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
	}
	if needsHC && spec.HealthCheckNodePort != 0 {
		for _, msg := range validation.IsValidPortNum(int(spec.HealthCheckNodePort)) {
			errs = append(errs, field.Invalid(hc, spec.HealthCheckNodePort, msg))
		}
	}
	itp := specPath.Child("internalTrafficPolicy")
	if spec.InternalTrafficPolicy == nil {
		switch spec.Type {
		case corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeClusterIP:
			errs = append(errs, field.Required(itp, ""))
		}
	} else if p := *spec.InternalTrafficPolicy; p != corev1.ServiceInternalTrafficPolicyCluster && p != corev1.ServiceInternalTrafficPolicyLocal {
		errs = append(errs, field.NotSupported(itp, p, []corev1.ServiceInternalTrafficPolicy{corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal}))
	}
	if d := spec.TrafficDistribution; d != nil {
		allowed := []string{corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode}
		if !sets.New(allowed...).Has(*d) {
			errs = append(errs, field.NotSupported(specPath.Child("trafficDistribution"), *d, allowed))
		}
	}
	return errs
}

// validateNonSpecialIP refuses addresses a destination may not have
// (unspecified, loopback, link-local), as upstream's ValidateEndpointIP
// for external IPs, Endpoints and EndpointSlices. It parses as the legacy
// parser does (leading zeros taken), since Endpoints check it even after
// the IP itself was refused.
func validateNonSpecialIP(ip string, path *field.Path) field.ErrorList {
	parsed := netutils.ParseIPSloppy(ip)
	if parsed == nil {
		return field.ErrorList{field.Invalid(path, ip, "must be a valid IP address").WithOrigin("format=ip-sloppy")}
	}
	var errs field.ErrorList
	if parsed.IsUnspecified() {
		errs = append(errs, field.Invalid(path, ip, fmt.Sprintf("may not be unspecified (%v)", ip)))
	}
	if parsed.IsLoopback() {
		errs = append(errs, field.Invalid(path, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if parsed.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(path, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if parsed.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(path, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs.WithOrigin("format=endpoint-ip")
}
