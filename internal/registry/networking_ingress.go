package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// Ingress validation, as upstream's ValidateIngressCreate and
// ValidateIngressUpdate (pkg/apis/networking/validation): a default
// backend or rules; DNS hosts (a rule's may be a wildcard, neither an IP);
// paths by their pathType; backends naming a resource or a Service and its
// port; TLS hosts and Secret names; a valid ingressClassName, which on
// create must agree with the deprecated class annotation.
//
// An update keeps what the stored object already had: TLS Secret names
// that are not valid names, and wildcard-host rules whose paths are
// invalid. Service names are DNS labels (RelaxedServiceNameValidation is
// GA and locked on in 1.37).

// ingressServiceName is the rule for a backend's Service name: a DNS label
// (RelaxedServiceNameValidation, locked on in 1.37), where a Service's own
// name must be a DNS-1035 label.
var ingressServiceName = apivalidation.NameIsDNSLabel

var (
	ingressPathTypes       = []string{"Exact", "ImplementationSpecific", "Prefix"}
	ingressBadPathSequence = []string{"//", "/./", "/../", "%2f", "%2F"}
	ingressBadPathSuffixes = []string{"/..", "/."}
)

// ingressLeniency is what an update may keep that a create may not have.
type ingressLeniency struct {
	invalidSecretNames   bool // skip TLS Secret name checks
	invalidWildcardRules bool // skip the paths of wildcard-host rules
}

func validateIngress(obj runtime.Object) field.ErrorList {
	in := obj.(*networkingv1.Ingress)
	errs := validateIngressSpec(&in.Spec, ingressLeniency{})
	class, annotated := in.Annotations[ingressClassAnnotation]
	if annotated && in.Spec.IngressClassName != nil && class != *in.Spec.IngressClassName {
		errs = append(errs, field.Invalid(field.NewPath("annotations").Child(ingressClassAnnotation), class,
			"must match `ingressClassName` when both are specified"))
	}
	return errs
}

// validateIngressUpdate checks the new object's metadata again, as
// upstream does, then its spec with the stored object's leniency.
func validateIngressUpdate(obj, old runtime.Object) field.ErrorList {
	in, was := obj.(*networkingv1.Ingress), old.(*networkingv1.Ingress)
	lenient := ingressLeniency{invalidSecretNames: hasInvalidTLSSecretName(was), invalidWildcardRules: hasInvalidWildcardRule(was)}
	errs := ValidateObjectMeta(in, true, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateIngressSpec(&in.Spec, lenient)...)
}

func validateIngressSpec(spec *networkingv1.IngressSpec, lenient ingressLeniency) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(specPath, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, validateIngressBackend(spec.DefaultBackend, specPath.Child("defaultBackend"), ingressServiceName)...)
	}
	for i := range spec.Rules {
		errs = append(errs, validateIngressRule(&spec.Rules[i], specPath.Child("rules").Index(i), lenient)...)
	}
	for i := range spec.TLS {
		errs = append(errs, validateIngressTLS(&spec.TLS[i], specPath.Child("tls").Index(i), lenient)...)
	}
	if spec.IngressClassName != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*spec.IngressClassName, false) {
			errs = append(errs, field.Invalid(specPath.Child("ingressClassName"), *spec.IngressClassName, msg))
		}
	}
	return errs
}

func validateIngressRule(rule *networkingv1.IngressRule, p *field.Path, lenient ingressLeniency) field.ErrorList {
	var errs field.ErrorList
	if rule.Host != "" {
		if netutils.ParseIPSloppy(rule.Host) != nil {
			errs = append(errs, field.Invalid(p.Child("host"), rule.Host, "must be a DNS name, not an IP address"))
		}
		errs = append(errs, ingressHostErrors(rule.Host, p.Child("host"))...)
	}
	if strings.Contains(rule.Host, "*") && lenient.invalidWildcardRules {
		return errs
	}
	return append(errs, validateIngressRuleValue(rule, p, ingressServiceName)...)
}

// ingressHostErrors: a DNS subdomain, or with a '*' a wildcard one.
func ingressHostErrors(host string, p *field.Path) field.ErrorList {
	check := validation.IsDNS1123Subdomain
	if strings.Contains(host, "*") {
		check = validation.IsWildcardDNS1123Subdomain
	}
	var errs field.ErrorList
	for _, msg := range check(host) {
		errs = append(errs, field.Invalid(p, host, msg))
	}
	return errs
}

// validateIngressRuleValue checks a rule's paths, with serviceName the
// rule for the names of the Services they send to.
func validateIngressRuleValue(rule *networkingv1.IngressRule, p *field.Path, serviceName apivalidation.ValidateNameFunc) field.ErrorList {
	if rule.HTTP == nil {
		return nil
	}
	p = p.Child("http")
	var errs field.ErrorList
	if len(rule.HTTP.Paths) == 0 {
		errs = append(errs, field.Required(p.Child("paths"), ""))
	}
	for i := range rule.HTTP.Paths {
		errs = append(errs, validateIngressPath(&rule.HTTP.Paths[i], p.Child("paths").Index(i), serviceName)...)
	}
	return errs
}

func validateIngressPath(path *networkingv1.HTTPIngressPath, p *field.Path, serviceName apivalidation.ValidateNameFunc) field.ErrorList {
	if path.PathType == nil {
		return field.ErrorList{field.Required(p.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	switch *path.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		errs = ingressMatchPathErrors(path.Path, p.Child("path"))
	case networkingv1.PathTypeImplementationSpecific:
		if path.Path != "" && !strings.HasPrefix(path.Path, "/") {
			errs = append(errs, field.Invalid(p.Child("path"), path.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("pathType"), *path.PathType, ingressPathTypes))
	}
	return append(errs, validateIngressBackend(&path.Backend, p.Child("backend"), serviceName)...)
}

// ingressMatchPathErrors: an Exact or Prefix path is absolute and has no
// empty, '.' or '..' segments, nor an escaped '/'.
func ingressMatchPathErrors(path string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !strings.HasPrefix(path, "/") {
		errs = append(errs, field.Invalid(p, path, "must be an absolute path"))
	}
	for _, seq := range ingressBadPathSequence {
		if strings.Contains(path, seq) {
			errs = append(errs, field.Invalid(p, path, fmt.Sprintf("must not contain '%s'", seq)))
		}
	}
	for _, suffix := range ingressBadPathSuffixes {
		if strings.HasSuffix(path, suffix) {
			errs = append(errs, field.Invalid(p, path, fmt.Sprintf("cannot end with '%s'", suffix)))
		}
	}
	return errs
}

func validateIngressBackend(b *networkingv1.IngressBackend, p *field.Path, serviceName apivalidation.ValidateNameFunc) field.ErrorList {
	switch {
	case b.Resource != nil && b.Service != nil:
		return field.ErrorList{field.Invalid(p, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		return validateIngressResourceBackend(b.Resource, p.Child("resource"))
	case b.Service != nil:
		return validateIngressServiceBackend(b.Service, p, serviceName)
	}
	return field.ErrorList{field.Invalid(p, "", "resource or service backend is required")}
}

func validateIngressServiceBackend(svc *networkingv1.IngressServiceBackend, p *field.Path, serviceName apivalidation.ValidateNameFunc) field.ErrorList {
	var errs field.ErrorList
	if svc.Name == "" {
		errs = append(errs, field.Required(p.Child("service", "name"), ""))
	}
	if svc.Name != "" {
		for _, msg := range serviceName(svc.Name, false) {
			errs = append(errs, field.Invalid(p.Child("service", "name"), svc.Name, msg))
		}
	}
	port := svc.Port
	switch {
	case port.Name != "" && port.Number != 0:
		errs = append(errs, field.Invalid(p, "", "cannot set both port name & port number"))
	case port.Name != "":
		for _, msg := range validation.IsValidPortName(port.Name) {
			errs = append(errs, field.Invalid(p.Child("service", "port", "name"), port.Name, msg))
		}
	case port.Number != 0:
		for _, msg := range validation.IsValidPortNum(int(port.Number)) {
			errs = append(errs, field.Invalid(p.Child("service", "port", "number"), port.Number, msg))
		}
	default:
		errs = append(errs, field.Required(p, "port name or number is required"))
	}
	return errs
}

// validateIngressResourceBackend: a reference to an object of any kind in
// the Ingress's namespace.
func validateIngressResourceBackend(ref *corev1.TypedLocalObjectReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.APIGroup != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*ref.APIGroup) {
			errs = append(errs, field.Invalid(p.Child("apiGroup"), *ref.APIGroup, msg))
		}
	}
	errs = append(errs, requiredPathSegment(ref.Kind, p.Child("kind"))...)
	return append(errs, requiredPathSegment(ref.Name, p.Child("name"))...)
}

// requiredPathSegment: set, and usable as a segment of a URL path.
func requiredPathSegment(value string, p *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsPathSegmentName(value) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

func validateIngressTLS(tls *networkingv1.IngressTLS, p *field.Path, lenient ingressLeniency) field.ErrorList {
	var errs field.ErrorList
	for i, host := range tls.Hosts {
		errs = append(errs, ingressHostErrors(host, p.Child("hosts").Index(i))...)
	}
	if !lenient.invalidSecretNames {
		for _, msg := range tlsSecretNameErrors(tls.SecretName) {
			errs = append(errs, field.Invalid(p.Child("secretName"), tls.SecretName, msg))
		}
	}
	return errs
}

// tlsSecretNameErrors: an optional Secret name.
func tlsSecretNameErrors(name string) []string {
	if name == "" {
		return nil
	}
	return apivalidation.NameIsDNSSubdomain(name, false)
}

// hasInvalidTLSSecretName: the stored Ingress names a TLS Secret by a name
// no Secret can have.
func hasInvalidTLSSecretName(in *networkingv1.Ingress) bool {
	for _, tls := range in.Spec.TLS {
		if len(tlsSecretNameErrors(tls.SecretName)) > 0 {
			return true
		}
	}
	return false
}

// hasInvalidWildcardRule: the stored Ingress has a wildcard-host rule
// whose paths are invalid, Service names checked as DNS-1035 labels there
// as upstream does.
func hasInvalidWildcardRule(in *networkingv1.Ingress) bool {
	for i := range in.Spec.Rules {
		rule := &in.Spec.Rules[i]
		if strings.Contains(rule.Host, "*") && len(validateIngressRuleValue(rule, nil, apivalidation.NameIsDNS1035Label)) > 0 {
			return true
		}
	}
	return false
}
