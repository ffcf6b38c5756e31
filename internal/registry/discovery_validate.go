package registry

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// EndpointSlice validation, as upstream's ValidateEndpointSliceCreate and
// ValidateEndpointSliceUpdate: a known address type that never changes;
// ports (20000 at most, DNS-label names unique in the slice, a protocol,
// a qualified appProtocol); endpoints (1000 at most, each with 1 to 100
// addresses of the slice's type, a DNS-subdomain nodeName, 16 topology
// labels at most, a DNS-label hostname, zone hints that are label values
// and node hints that are node names, 8 of each at most, unique).
//
// An update whose endpoints are unchanged keeps them even when they no
// longer pass. 1.37 enforces beta declarative rules on the address type
// (required, immutable, one of the three) and on each endpoint's addresses
// (required, 100 at most); their errors replace the handwritten ones they
// repeat and come last.

const (
	maxEndpointSliceEndpoints = 1000
	maxEndpointSlicePorts     = 20000
	maxEndpointAddresses      = 100
	maxEndpointTopologyLabels = 16
	maxEndpointZoneHints      = 8
	maxEndpointNodeHints      = 8
)

var (
	addressTypePath        = field.NewPath("addressType")
	endpointSliceEndpoints = field.NewPath("endpoints")
	endpointAddressTypes   = sets.New(discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN)
	endpointSliceProtocols = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)
)

func validateEndpointSlice(obj runtime.Object) field.ErrorList {
	s := obj.(*discoveryv1.EndpointSlice)
	return withEnforcedDeclarative(validateEndpointSliceFields(s, nil), declarativeEndpointSlice(s, nil))
}

func validateEndpointSliceUpdate(obj, old runtime.Object) field.ErrorList {
	s, was := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
	errs := validateEndpointSliceFields(s, was)
	errs = append(errs, apivalidation.ValidateImmutableField(s.AddressType, was.AddressType, addressTypePath).WithOrigin("immutable").MarkCoveredByDeclarative()...)
	return withEnforcedDeclarative(errs, declarativeEndpointSlice(s, was))
}

// validateEndpointSliceFields are the handwritten checks; old is nil on
// create.
func validateEndpointSliceFields(s, old *discoveryv1.EndpointSlice) field.ErrorList {
	errs := validateAddressType(s.AddressType)
	errs = append(errs, validateEndpointSlicePorts(s.Ports)...)
	endpointErrs := validateSliceEndpoints(s.Endpoints, s.AddressType)
	if len(endpointErrs) > 0 && old != nil && equality.Semantic.DeepEqual(old.Endpoints, s.Endpoints) {
		endpointErrs = nil
	}
	return append(errs, endpointErrs...)
}

func validateAddressType(t discoveryv1.AddressType) field.ErrorList {
	switch {
	case t == "":
		return field.ErrorList{field.Required(addressTypePath, "").MarkCoveredByDeclarative()}
	case !endpointAddressTypes.Has(t):
		return field.ErrorList{field.NotSupported(addressTypePath, t, sets.List(endpointAddressTypes)).MarkCoveredByDeclarative()}
	}
	return nil
}

func validateEndpointSlicePorts(ports []discoveryv1.EndpointPort) field.ErrorList {
	p := field.NewPath("ports")
	if len(ports) > maxEndpointSlicePorts {
		return field.ErrorList{field.TooMany(p, len(ports), maxEndpointSlicePorts)}
	}
	var errs field.ErrorList
	names := make([]string, 0, len(ports))
	for i, port := range ports {
		ip := p.Index(i)
		name := ""
		if port.Name != nil {
			name = *port.Name
		}
		if name != "" {
			errs = append(errs, dns1123Label(name, ip.Child("name"))...)
		}
		if slices.Contains(names, name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), port.Name))
		} else {
			names = append(names, name)
		}
		switch {
		case port.Protocol == nil:
			errs = append(errs, field.Required(ip.Child("protocol"), ""))
		case !endpointSliceProtocols.Has(*port.Protocol):
			errs = append(errs, field.NotSupported(ip.Child("protocol"), *port.Protocol, sets.List(endpointSliceProtocols)))
		}
		if port.AppProtocol != nil {
			errs = append(errs, qualifiedName(*port.AppProtocol, ip.Child("appProtocol"))...)
		}
	}
	return errs
}

func validateSliceEndpoints(endpoints []discoveryv1.Endpoint, t discoveryv1.AddressType) field.ErrorList {
	if len(endpoints) > maxEndpointSliceEndpoints {
		return field.ErrorList{field.TooMany(endpointSliceEndpoints, len(endpoints), maxEndpointSliceEndpoints)}
	}
	var errs field.ErrorList
	for i := range endpoints {
		errs = append(errs, validateSliceEndpoint(&endpoints[i], t, endpointSliceEndpoints.Index(i))...)
	}
	return errs
}

func validateSliceEndpoint(ep *discoveryv1.Endpoint, t discoveryv1.AddressType, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	addrs := p.Child("addresses")
	if len(ep.Addresses) == 0 {
		errs = append(errs, field.Required(addrs, "must contain at least 1 address").MarkCoveredByDeclarative())
	} else if len(ep.Addresses) > maxEndpointAddresses {
		errs = append(errs, field.TooMany(addrs, len(ep.Addresses), maxEndpointAddresses).WithOrigin("maxItems").MarkCoveredByDeclarative())
	}
	for i, a := range ep.Addresses {
		errs = append(errs, validateSliceAddress(a, t, addrs, i)...)
	}
	if ep.NodeName != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*ep.NodeName, false) {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *ep.NodeName, msg))
		}
	}
	topology := p.Child("deprecatedTopology")
	if len(ep.DeprecatedTopology) > maxEndpointTopologyLabels {
		errs = append(errs, field.TooMany(topology, len(ep.DeprecatedTopology), maxEndpointTopologyLabels))
	}
	errs = append(errs, metav1validation.ValidateLabels(ep.DeprecatedTopology, topology)...)
	if _, ok := ep.DeprecatedTopology[corev1.LabelTopologyZone]; ok {
		errs = append(errs, field.InternalError(topology.Key(corev1.LabelTopologyZone), fmt.Errorf("reserved key was not removed in conversion")))
	}
	if ep.Hostname != nil {
		errs = append(errs, dns1123Label(*ep.Hostname, p.Child("hostname"))...)
	}
	if ep.Hints != nil {
		errs = append(errs, validateEndpointHints(ep.Hints, p.Child("hints"))...)
	}
	return errs
}

// validateSliceAddress checks address i of addrs by the slice's address
// type; an unknown type checks nothing. A family mismatch is reported on
// the list, not the address, as upstream does.
func validateSliceAddress(a string, t discoveryv1.AddressType, addrs *field.Path, i int) field.ErrorList {
	p := addrs.Index(i)
	switch t {
	case discoveryv1.AddressTypeIPv4:
		if errs := validation.IsValidIPForLegacyField(p, a, (defaultGates{}).Enabled(gateStrictIPCIDRValidation), nil); len(errs) > 0 {
			return errs
		}
		var errs field.ErrorList
		if !netutils.IsIPv4String(a) {
			errs = append(errs, field.Invalid(addrs, a, "must be an IPv4 address"))
		}
		return append(errs, validateNonSpecialIP(a, p)...)
	case discoveryv1.AddressTypeIPv6:
		if errs := validation.IsValidIP(p, a); len(errs) > 0 {
			return errs
		}
		var errs field.ErrorList
		if !netutils.IsIPv6String(a) {
			errs = append(errs, field.Invalid(addrs, a, "must be an IPv6 address"))
		}
		return append(errs, validateNonSpecialIP(a, p)...)
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(p, a)
	}
	return nil
}

// validateEndpointHints: too many zone hints stop the checks, node hints
// included.
func validateEndpointHints(h *discoveryv1.EndpointHints, p *field.Path) field.ErrorList {
	zones := p.Child("forZones")
	if len(h.ForZones) > maxEndpointZoneHints {
		return field.ErrorList{field.TooMany(zones, len(h.ForZones), maxEndpointZoneHints)}
	}
	var errs field.ErrorList
	seen := make([]string, 0, len(h.ForZones))
	for i, z := range h.ForZones {
		zp := zones.Index(i).Child("name")
		errs = append(errs, duplicateHint(&seen, z.Name, zp)...)
		for _, msg := range validation.IsValidLabelValue(z.Name) {
			errs = append(errs, field.Invalid(zp, z.Name, msg))
		}
	}
	nodes := p.Child("forNodes")
	if len(h.ForNodes) > maxEndpointNodeHints {
		return append(errs, field.TooMany(nodes, len(h.ForNodes), maxEndpointNodeHints))
	}
	seen = seen[:0]
	for i, n := range h.ForNodes {
		np := nodes.Index(i).Child("name")
		errs = append(errs, duplicateHint(&seen, n.Name, np)...)
		for _, msg := range apivalidation.NameIsDNSSubdomain(n.Name, false) {
			errs = append(errs, field.Invalid(np, n.Name, msg))
		}
	}
	return errs
}

func duplicateHint(seen *[]string, name string, p *field.Path) field.ErrorList {
	if slices.Contains(*seen, name) {
		return field.ErrorList{field.Duplicate(p, name)}
	}
	*seen = append(*seen, name)
	return nil
}

// declarativeEndpointSlice are the errors of the enforced beta declarative
// rules (old nil on create); unchanged fields are not checked again.
func declarativeEndpointSlice(s, old *discoveryv1.EndpointSlice) field.ErrorList {
	ctx, op := context.Background(), operation.Operation{Type: operation.Create}
	var oldType *discoveryv1.AddressType
	var oldEndpoints []discoveryv1.Endpoint
	if old != nil {
		op.Type, oldType, oldEndpoints = operation.Update, &old.AddressType, old.Endpoints
	}
	var errs field.ErrorList
	if old == nil || s.AddressType != old.AddressType {
		typeErrs := validate.RequiredValue(ctx, op, addressTypePath, &s.AddressType, oldType)
		typeErrs = append(typeErrs, validate.Immutable(ctx, op, addressTypePath, &s.AddressType, oldType)...)
		if len(typeErrs) == 0 {
			typeErrs = validate.Enum(ctx, op, addressTypePath, &s.AddressType, oldType, endpointAddressTypes, nil)
		}
		errs = append(errs, typeErrs...)
	}
	if len(s.Endpoints) > 0 && (old == nil || !equality.Semantic.DeepEqual(s.Endpoints, oldEndpoints)) {
		for i := range s.Endpoints {
			addrs := endpointSliceEndpoints.Index(i).Child("addresses")
			errs = append(errs, validate.RequiredSlice(ctx, op, addrs, s.Endpoints[i].Addresses, nil)...)
			errs = append(errs, validate.MaxItems(ctx, op, addrs, s.Endpoints[i].Addresses, nil, maxEndpointAddresses)...)
		}
	}
	return errs.MarkBeta()
}
