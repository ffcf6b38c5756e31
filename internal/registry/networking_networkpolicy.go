package registry

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// NetworkPolicy validation, as upstream's ValidateNetworkPolicy and
// ValidateNetworkPolicyUpdate: label selectors; ports (a protocol
// NetworkPolicy supports, a number or a name, an endPort only after a
// number and not below it); peers (exactly one of the selectors or an
// ipBlock, whose CIDR and exceptions are legacy CIDRs, the exceptions
// strictly inside it); at most two known policyTypes.
//
// An update keeps what the stored policy had: invalid label values in
// every selector when its podSelector had some, and any CIDR it held
// (StrictIPCIDRValidation refuses the old parser's forms in new ones).
// 1.37 enforces a beta declarative rule requiring an ipBlock's cidr
// (unless its rules are unchanged); that error replaces the handwritten
// one and comes last.

var networkPolicyProtocols = []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}

var networkPolicyTypes = []string{string(networkingv1.PolicyTypeIngress), string(networkingv1.PolicyTypeEgress)}

// networkPolicyLeniency is what an update may keep that a create may not
// have.
type networkPolicyLeniency struct {
	invalidLabelValues bool     // selectors may have invalid label values
	storedCIDRs        []string // CIDRs taken as they are
}

func validateNetworkPolicy(obj runtime.Object) field.ErrorList {
	spec := &obj.(*networkingv1.NetworkPolicy).Spec
	return withEnforcedDeclarative(validateNetworkPolicySpec(spec, networkPolicyLeniency{}), declarativeIPBlockCIDRs(spec, nil))
}

func validateNetworkPolicyUpdate(obj, old runtime.Object) field.ErrorList {
	spec, was := &obj.(*networkingv1.NetworkPolicy).Spec, &old.(*networkingv1.NetworkPolicy).Spec
	lenient := networkPolicyLeniency{
		invalidLabelValues: len(metav1validation.ValidateLabelSelector(&was.PodSelector, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0,
		storedCIDRs:        ipBlockCIDRs(was),
	}
	return withEnforcedDeclarative(validateNetworkPolicySpec(spec, lenient), declarativeIPBlockCIDRs(spec, was))
}

// ipBlockCIDRs are every CIDR and exception of the policy's ipBlocks.
func ipBlockCIDRs(spec *networkingv1.NetworkPolicySpec) []string {
	var cidrs []string
	add := func(peers []networkingv1.NetworkPolicyPeer) {
		for _, peer := range peers {
			if peer.IPBlock != nil {
				cidrs = append(append(cidrs, peer.IPBlock.CIDR), peer.IPBlock.Except...)
			}
		}
	}
	for _, rule := range spec.Ingress {
		add(rule.From)
	}
	for _, rule := range spec.Egress {
		add(rule.To)
	}
	return cidrs
}

func validateNetworkPolicySpec(spec *networkingv1.NetworkPolicySpec, lenient networkPolicyLeniency) field.ErrorList {
	selectorOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: lenient.invalidLabelValues}
	errs := metav1validation.ValidateLabelSelector(&spec.PodSelector, selectorOpts, specPath.Child("podSelector"))
	for i, rule := range spec.Ingress {
		p := specPath.Child("ingress").Index(i)
		errs = append(errs, validateNetworkPolicyRule(rule.Ports, rule.From, p, p.Child("from"), lenient)...)
	}
	for i, rule := range spec.Egress {
		p := specPath.Child("egress").Index(i)
		errs = append(errs, validateNetworkPolicyRule(rule.Ports, rule.To, p, p.Child("to"), lenient)...)
	}
	return append(errs, validatePolicyTypes(&spec.PolicyTypes)...)
}

// validateNetworkPolicyRule checks a rule's ports, then its peers (at
// peersPath: from or to).
func validateNetworkPolicyRule(ports []networkingv1.NetworkPolicyPort, peers []networkingv1.NetworkPolicyPeer, p, peersPath *field.Path, lenient networkPolicyLeniency) field.ErrorList {
	var errs field.ErrorList
	for i := range ports {
		errs = append(errs, validateNetworkPolicyPort(&ports[i], p.Child("ports").Index(i))...)
	}
	for i := range peers {
		errs = append(errs, validateNetworkPolicyPeer(&peers[i], peersPath.Index(i), lenient)...)
	}
	return errs
}

func validateNetworkPolicyPort(port *networkingv1.NetworkPolicyPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pr := port.Protocol; pr != nil && *pr != corev1.ProtocolTCP && *pr != corev1.ProtocolUDP && *pr != corev1.ProtocolSCTP {
		errs = append(errs, field.NotSupported(p.Child("protocol"), *pr, networkPolicyProtocols))
	}
	switch {
	case port.Port == nil && port.EndPort != nil:
		errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is not specified"))
	case port.Port == nil:
	case port.Port.Type == intstr.Int:
		errs = append(errs, networkPolicyPortRangeErrors(port.Port.IntVal, port.EndPort, p)...)
	default:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range validation.IsValidPortName(port.Port.StrVal) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.StrVal, msg))
		}
	}
	return errs
}

// networkPolicyPortRangeErrors: a numbered port, and an optional endPort
// not below it.
func networkPolicyPortRangeErrors(port int32, end *int32, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidPortNum(int(port)) {
		errs = append(errs, field.Invalid(p.Child("port"), port, msg))
	}
	if end == nil {
		return errs
	}
	if *end < port {
		errs = append(errs, field.Invalid(p.Child("endPort"), *end, "must be greater than or equal to `port`"))
	}
	for _, msg := range validation.IsValidPortNum(int(*end)) {
		errs = append(errs, field.Invalid(p.Child("endPort"), *end, msg))
	}
	return errs
}

func validateNetworkPolicyPeer(peer *networkingv1.NetworkPolicyPeer, p *field.Path, lenient networkPolicyLeniency) field.ErrorList {
	selectorOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: lenient.invalidLabelValues}
	var errs field.ErrorList
	kinds := 0
	if peer.PodSelector != nil {
		kinds++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, selectorOpts, p.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		kinds++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, selectorOpts, p.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		kinds++
		errs = append(errs, validateIPBlock(peer.IPBlock, p.Child("ipBlock"), lenient.storedCIDRs)...)
	}
	switch {
	case kinds == 0:
		errs = append(errs, field.Required(p, "must specify a peer"))
	case kinds > 1 && peer.IPBlock != nil:
		errs = append(errs, field.Forbidden(p, "may not specify both ipBlock and another peer"))
	}
	return errs
}

// validateIPBlock: a legacy CIDR, and exceptions that are legacy CIDRs
// strictly inside it; the stored CIDRs are taken as they are.
func validateIPBlock(block *networkingv1.IPBlock, p *field.Path, storedCIDRs []string) field.ErrorList {
	if block.CIDR == "" {
		return field.ErrorList{field.Required(p.Child("cidr"), "").MarkCoveredByDeclarative()}
	}
	strict := (defaultGates{}).Enabled(gateStrictIPCIDRValidation)
	errs := validation.IsValidCIDRForLegacyField(p.Child("cidr"), block.CIDR, strict, storedCIDRs)
	_, outer, err := netutils.ParseCIDRSloppy(block.CIDR)
	if err != nil {
		return errs
	}
	outerBits, _ := outer.Mask.Size()
	for i, except := range block.Except {
		ep := p.Child("except").Index(i)
		errs = append(errs, validation.IsValidCIDRForLegacyField(ep, except, strict, storedCIDRs)...)
		_, inner, err := netutils.ParseCIDRSloppy(except)
		if err != nil {
			continue
		}
		if innerBits, _ := inner.Mask.Size(); !outer.Contains(inner.IP) || outerBits >= innerBits {
			errs = append(errs, field.Invalid(ep, except, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}

func validatePolicyTypes(types *[]networkingv1.PolicyType) field.ErrorList {
	p := specPath.Child("policyTypes")
	if len(*types) > len(networkPolicyTypes) {
		return field.ErrorList{field.Invalid(p, types, "may not specify more than two policyTypes")}
	}
	var errs field.ErrorList
	for i, t := range *types {
		if t != networkingv1.PolicyTypeIngress && t != networkingv1.PolicyTypeEgress {
			errs = append(errs, field.NotSupported(p.Index(i), t, networkPolicyTypes))
		}
	}
	return errs
}

// declarativeIPBlockCIDRs are the errors of the beta declarative rule
// requiring an ipBlock's cidr: ingress peers, then egress ones, the
// rules of a direction skipped when unchanged from old's (nil on create).
func declarativeIPBlockCIDRs(spec, old *networkingv1.NetworkPolicySpec) field.ErrorList {
	var errs field.ErrorList
	required := func(peers []networkingv1.NetworkPolicyPeer, p *field.Path) {
		for i, peer := range peers {
			if peer.IPBlock != nil {
				errs = append(errs, validate.RequiredValue(context.Background(), operation.Operation{}, p.Index(i).Child("ipBlock", "cidr"), &peer.IPBlock.CIDR, nil)...)
			}
		}
	}
	if old == nil || !equality.Semantic.DeepEqual(spec.Ingress, old.Ingress) {
		for i, rule := range spec.Ingress {
			required(rule.From, specPath.Child("ingress").Index(i).Child("from"))
		}
	}
	if old == nil || !equality.Semantic.DeepEqual(spec.Egress, old.Egress) {
		for i, rule := range spec.Egress {
			required(rule.To, specPath.Child("egress").Index(i).Child("to"))
		}
	}
	return errs.MarkBeta()
}
