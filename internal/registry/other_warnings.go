package registry

import (
	"fmt"
	"maps"
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The client warnings of the networking, discovery, node and storage
// kinds that kube-apiserver 1.37 warns about (CSIDriver's and
// CSIStorageCapacity's are in storage.go). old is nil on create.

// ingressClassAnnotation named an Ingress's class before ingressClassName.
const ingressClassAnnotation = "kubernetes.io/ingress.class"

// ingressWarnings: the class annotation without ingressClassName, on
// create only (the Ingress strategy warns about nothing on update).
func ingressWarnings(obj, old runtime.Object) []string {
	in := obj.(*networkingv1.Ingress)
	if old != nil || in.Spec.IngressClassName != nil {
		return nil
	}
	if _, ok := in.Annotations[ingressClassAnnotation]; !ok {
		return nil
	}
	return []string{fmt.Sprintf("annotation %q is deprecated, please use 'spec.ingressClassName' instead", ingressClassAnnotation)}
}

// networkPolicyWarnings: ipBlock CIDRs and exceptions in a form that is
// not canonical, ingress rules first, on create and update.
func networkPolicyWarnings(obj, _ runtime.Object) []string {
	spec := &obj.(*networkingv1.NetworkPolicy).Spec
	var w []string
	for i, rule := range spec.Ingress {
		for j, peer := range rule.From {
			w = append(w, ipBlockWarnings(field.NewPath("spec", "ingress").Index(i).Child("from").Index(j).Child("ipBlock"), peer.IPBlock)...)
		}
	}
	for i, rule := range spec.Egress {
		for j, peer := range rule.To {
			w = append(w, ipBlockWarnings(field.NewPath("spec", "egress").Index(i).Child("to").Index(j).Child("ipBlock"), peer.IPBlock)...)
		}
	}
	return w
}

func ipBlockWarnings(p *field.Path, b *networkingv1.IPBlock) []string {
	if b == nil {
		return nil
	}
	w := utilvalidation.GetWarningsForCIDR(p.Child("cidr"), b.CIDR)
	for k, except := range b.Except {
		w = append(w, utilvalidation.GetWarningsForCIDR(p.Child("except").Index(k), except)...)
	}
	return w
}

// endpointSliceControllers are the managers whose slices are not checked
// for addresses (upstream trusts its controllers' output).
var endpointSliceControllers = map[string]bool{
	"endpointslice-controller.k8s.io":          true,
	"endpointslicemirroring-controller.k8s.io": true,
}

// endpointSliceWarnings: on create the deprecated FQDN address type; on
// create and update addresses in a form that is not canonical.
func endpointSliceWarnings(obj, old runtime.Object) []string {
	s := obj.(*discoveryv1.EndpointSlice)
	var w []string
	if old == nil && s.AddressType == discoveryv1.AddressTypeFQDN {
		w = append(w, "spec.addressType: FQDN endpoints are deprecated")
	}
	if endpointSliceControllers[s.Labels[discoveryv1.LabelManagedBy]] {
		return w
	}
	for i, ep := range s.Endpoints {
		for j, addr := range ep.Addresses {
			w = append(w, utilvalidation.GetWarningsForIP(field.NewPath("endpoints").Index(i).Child("addresses").Index(j), addr)...)
		}
	}
	return w
}

// runtimeClassWarnings: one warning per deprecated node label in the
// scheduling node selector, on create and update; the text names the
// selector, not the label (in key order; upstream's is map order).
func runtimeClassWarnings(obj, _ runtime.Object) []string {
	rc := obj.(*nodev1.RuntimeClass)
	if rc.Scheduling == nil {
		return nil
	}
	var w []string
	for _, key := range slices.Sorted(maps.Keys(rc.Scheduling.NodeSelector)) {
		if msg, ok := deprecatedNodeLabels[key]; ok {
			w = append(w, fmt.Sprintf("scheduling.nodeSelector: %s", msg))
		}
	}
	return w
}

// storageClassWarnings: deprecated node labels in allowed topologies, on
// create and update.
func storageClassWarnings(obj, _ runtime.Object) []string {
	var w []string
	for i, topo := range obj.(*storagev1.StorageClass).AllowedTopologies {
		for j, e := range topo.MatchLabelExpressions {
			if msg, ok := deprecatedNodeLabels[e.Key]; ok {
				w = append(w, fmt.Sprintf("%s: %s", field.NewPath("allowedTopologies").Index(i).Child("matchLabelExpressions").Index(j).Child("key"), msg))
			}
		}
	}
	return w
}
