package registry

import (
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of a claim's spec (claims and claim templates) and of a
// device class's spec, as upstream's pkg/apis/resource/validation.

// claimChecks is what the checks of one claim share: whether its CEL
// expressions were stored before (and need no compiling), the summed cost
// of its derived attributes, and the attribute names its constraints name
// by request ("" for all requests).
type claimChecks struct {
	stored      bool
	derivedCost *uint64
	constrained map[string]map[string]bool
}

// requestNames are a claim's request names, each with its subrequests'.
type requestNames map[string]map[string]bool

// has reports whether ref names a request, or a request and one of its
// subrequests ("req/sub").
func (r requestNames) has(ref string) bool {
	parts := strings.Split(ref, "/")
	if len(parts) > 2 {
		return false
	}
	subs, ok := r[parts[0]]
	if !ok {
		return false
	}
	return len(parts) == 1 || subs[parts[1]]
}

func claimRequestNames(c *resourcev1.DeviceClaim) requestNames {
	out := requestNames{}
	for _, r := range c.Requests {
		subs := map[string]bool{}
		for _, s := range r.FirstAvailable {
			subs[s.Name] = true
		}
		out[r.Name] = subs
	}
	return out
}

func constrainedAttributes(cs []resourcev1.DeviceConstraint) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	add := func(req, attr string) {
		if out[req] == nil {
			out[req] = map[string]bool{}
		}
		out[req][attr] = true
	}
	for _, c := range cs {
		var attr string
		switch {
		case c.MatchAttribute != nil:
			attr = string(*c.MatchAttribute)
		case c.DistinctAttribute != nil:
			attr = string(*c.DistinctAttribute)
		default:
			continue
		}
		if len(c.Requests) == 0 {
			add("", attr)
		}
		for _, r := range c.Requests {
			add(r, attr)
		}
	}
	return out
}

// constrains reports whether a constraint on all requests, on request
// ("req" or "req/sub") or on its parent request names attr.
func (c claimChecks) constrains(attr, request string) bool {
	if c.constrained[""][attr] || c.constrained[request][attr] {
		return true
	}
	parent, _, sub := strings.Cut(request, "/")
	return sub && c.constrained[parent][attr]
}

func validateClaimSpec(s *resourcev1.ResourceClaimSpec, p *field.Path, stored bool) field.ErrorList {
	c := &s.Devices
	p = p.Child("devices")
	names := claimRequestNames(c)
	var cost uint64
	checks := claimChecks{stored: stored, derivedCost: &cost, constrained: constrainedAttributes(c.Constraints)}
	errs := eachUnique(c.Requests, resourcev1.DeviceRequestsMaxSize, p.Child("requests"), sizeCovered|uniqueCovered,
		func(r resourcev1.DeviceRequest, p *field.Path) field.ErrorList { return deviceRequest(r, p, checks) },
		func(r resourcev1.DeviceRequest) string { return r.Name })
	errs = append(errs, eachItem(c.Constraints, resourcev1.DeviceConstraintsMaxSize, p.Child("constraints"), sizeCovered,
		func(c resourcev1.DeviceConstraint, p *field.Path) field.ErrorList {
			return deviceConstraint(c, p, names)
		})...)
	errs = append(errs, eachItem(c.Config, resourcev1.DeviceConfigMaxSize, p.Child("config"), sizeCovered,
		func(c resourcev1.DeviceClaimConfiguration, p *field.Path) field.ErrorList {
			errs := requestRefs(c.Requests, p.Child("requests"), names)
			return append(errs, deviceConfiguration(c.DeviceConfiguration, p, stored)...)
		})...)
	if cost > resourcev1.DeviceClaimDerivedAttributeCELMaxCost {
		errs = append(errs, field.Forbidden(p, "too complex, total cost of derived attribute CEL expressions in the claim exceeds cost limit"))
	}
	return errs
}

func deviceRequest(r resourcev1.DeviceRequest, p *field.Path, checks claimChecks) field.ErrorList {
	errs := dnsLabel(r.Name, p.Child("name"))
	switch {
	case len(r.FirstAvailable) == 0 && r.Exactly == nil:
		errs = append(errs, field.Required(p, "exactly one of `exactly` or `firstAvailable` is required"))
	case len(r.FirstAvailable) > 0 && r.Exactly != nil:
		errs = append(errs, field.Invalid(p, nil, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
	case r.Exactly != nil:
		errs = append(errs, exactRequest(r.Exactly, p.Child("exactly"), checks, r.Name)...)
	default:
		errs = append(errs, eachUnique(r.FirstAvailable, resourcev1.FirstAvailableDeviceRequestMaxSize, p.Child("firstAvailable"),
			sizeCovered|uniqueCovered,
			func(s resourcev1.DeviceSubRequest, p *field.Path) field.ErrorList {
				return subRequest(s, p, checks, r.Name)
			},
			func(s resourcev1.DeviceSubRequest) string { return s.Name })...)
	}
	return errs
}

func subRequest(s resourcev1.DeviceSubRequest, p *field.Path, checks claimChecks, parent string) field.ErrorList {
	errs := dnsLabel(s.Name, p.Child("name"))
	errs = append(errs, deviceClassRef(s.DeviceClassName, p.Child("deviceClassName")).MarkCoveredByDeclarative()...)
	errs = append(errs, selectors(s.Selectors, p.Child("selectors"), checks.stored)...)
	errs = append(errs, derivedAttributes(s.DerivedAttributes, p.Child("derivedAttributes"), checks, parent+"/"+s.Name)...)
	errs = append(errs, allocationMode(s.AllocationMode, s.Count, p)...)
	return append(errs, tolerations(s.Tolerations, p.Child("tolerations"))...)
}

func exactRequest(r *resourcev1.ExactDeviceRequest, p *field.Path, checks claimChecks, name string) field.ErrorList {
	errs := deviceClassRef(r.DeviceClassName, p.Child("deviceClassName"))
	errs = append(errs, selectors(r.Selectors, p.Child("selectors"), checks.stored)...)
	errs = append(errs, derivedAttributes(r.DerivedAttributes, p.Child("derivedAttributes"), checks, name)...)
	errs = append(errs, allocationMode(r.AllocationMode, r.Count, p)...)
	return append(errs, tolerations(r.Tolerations, p.Child("tolerations"))...)
}

func deviceClassRef(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return dnsSubdomain(name, p)
}

// allocationMode: All takes no count, ExactCount a positive one.
func allocationMode(mode resourcev1.DeviceAllocationMode, count int64, p *field.Path) field.ErrorList {
	switch mode {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			return field.ErrorList{field.Invalid(p.Child("count"), count, fmt.Sprintf("must not be specified when allocationMode is '%s'", mode))}
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			return field.ErrorList{field.Invalid(p.Child("count"), count, "must be greater than zero")}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("allocationMode"), mode,
			[]resourcev1.DeviceAllocationMode{resourcev1.DeviceAllocationModeAll, resourcev1.DeviceAllocationModeExactCount}).MarkCoveredByDeclarative()}
	}
	return nil
}

func selectors(ss []resourcev1.DeviceSelector, p *field.Path, stored bool) field.ErrorList {
	return eachItem(ss, resourcev1.DeviceSelectorsMaxSize, p, sizeCovered, func(s resourcev1.DeviceSelector, p *field.Path) field.ErrorList {
		if s.CEL == nil {
			return field.ErrorList{field.Required(p.Child("cel"), "")}
		}
		return celExpression(s.CEL.Expression, p.Child("cel", "expression"), stored, false, nil)
	})
}

// derivedAttributes: distinct names, each named by a constraint on the
// request, and compiling expressions.
func derivedAttributes(as []resourcev1.DeviceDerivedAttribute, p *field.Path, checks claimChecks, request string) field.ErrorList {
	return eachUnique(as, -1, p, 0, func(a resourcev1.DeviceDerivedAttribute, p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if a.Name != "" && !checks.constrains(string(a.Name), request) {
			errs = append(errs, field.Invalid(p.Child("name"), a.Name,
				"must be referenced by at least one matchAttribute or distinctAttribute constraint targeting this request"))
		}
		if a.Expression != "" {
			errs = append(errs, celExpression(a.Expression, p.Child("expression"), checks.stored, true, checks.derivedCost)...)
		}
		return errs
	}, func(a resourcev1.DeviceDerivedAttribute) string { return string(a.Name) })
}

func deviceConstraint(c resourcev1.DeviceConstraint, p *field.Path, names requestNames) field.ErrorList {
	errs := requestRefs(c.Requests, p.Child("requests"), names)
	switch {
	case c.MatchAttribute != nil:
		errs = append(errs, fullyQualifiedName(*c.MatchAttribute, p.Child("matchAttribute")).MarkCoveredByDeclarative()...)
	case c.DistinctAttribute != nil:
		errs = append(errs, fullyQualifiedName(*c.DistinctAttribute, p.Child("distinctAttribute")).MarkCoveredByDeclarative()...)
	case draGates.Enabled(gateConsumableCapacity):
		errs = append(errs, field.Required(p, `exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`))
	default:
		errs = append(errs, field.Required(p.Child("matchAttribute"), ""))
	}
	return errs
}

// requestRefs: at most 32 distinct names of requests (or request/subrequest)
// of the claim.
func requestRefs(refs []string, p *field.Path, names requestNames) field.ErrorList {
	return eachUnique(refs, resourcev1.DeviceRequestsMaxSize, p, sizeCovered|uniqueCovered,
		func(ref string, p *field.Path) field.ErrorList { return requestRef(ref, p, names) }, sameString)
}

const requestRefMsg = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"

func requestRef(ref string, p *field.Path, names requestNames) field.ErrorList {
	parts := strings.Split(ref, "/")
	if len(parts) > 2 {
		return field.ErrorList{field.Invalid(p, ref, requestRefMsg)}
	}
	var errs field.ErrorList
	for _, part := range parts {
		errs = append(errs, dnsLabel(part, p)...)
	}
	if !names.has(ref) {
		errs = append(errs, field.Invalid(p, ref, requestRefMsg))
	}
	return errs
}

func deviceConfiguration(c resourcev1.DeviceConfiguration, p *field.Path, stored bool) field.ErrorList {
	if c.Opaque == nil {
		return field.ErrorList{field.Required(p.Child("opaque"), "")}
	}
	p = p.Child("opaque")
	errs := coveredDriverName(c.Opaque.Driver, p.Child("driver"))
	return append(errs, rawObject(c.Opaque.Parameters, p.Child("parameters"), stored, resourcev1.OpaqueParametersMaxLength)...)
}

// validateDeviceClassSpec: selectors and configuration as a claim's (those
// unchanged since old count as stored), and an extended resource name.
func validateDeviceClassSpec(s, old *resourcev1.DeviceClassSpec) field.ErrorList {
	p := specPath
	stored := old != nil && deepEqual(s.Selectors, old.Selectors)
	errs := selectors(s.Selectors, p.Child("selectors"), stored)
	stored = old != nil && deepEqual(s.Config, old.Config)
	errs = append(errs, eachItem(s.Config, resourcev1.DeviceConfigMaxSize, p.Child("config"), sizeCovered,
		func(c resourcev1.DeviceClassConfiguration, p *field.Path) field.ErrorList {
			return deviceConfiguration(c.DeviceConfiguration, p, stored)
		})...)
	if n := s.ExtendedResourceName; n != nil && !isExtendedResource(corev1ResourceName(*n)) {
		errs = append(errs, field.Invalid(p.Child("extendedResourceName"), *n, "must be a valid extended resource name").
			MarkCoveredByDeclarative().WithOrigin("format=k8s-extended-resource-name"))
	}
	return errs
}

// validateClaimTemplateSpec: the claim's metadata as a template's, and its
// spec as a new claim's.
func validateClaimTemplateSpec(s *resourcev1.ResourceClaimTemplateSpec) field.ErrorList {
	errs := validateTemplateMeta(&s.ObjectMeta, specPath.Child("metadata"))
	return append(errs, validateClaimSpec(&s.Spec, specPath.Child("spec"), false)...)
}
