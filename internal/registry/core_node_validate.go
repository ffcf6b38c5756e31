package registry

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/admitd/admitd/internal/registry/internal/core"
)

// Node validation as kube-apiserver 1.37's node strategies answer it: a
// create is checked by ValidateNode; an update of the main resource by
// ValidateNode and then ValidateNodeUpdate (so some errors come twice, as
// upstream's); a nodes/status write by ValidateNodeUpdate alone. Status
// fields are optional but checked when given. Upstream reports taints,
// the swap capacity and the node annotations under metadata (its paths
// start from metadata), which admitd keeps.
//
// 1.37's declarative validation adds one enforced rule for Nodes:
// spec.podPreemptionPolicy is forbidden while the
// InPlacePodVerticalScalingSchedulerPreemption gate is off (its default),
// unless it is unchanged; that error comes last.

const (
	nodeTaintsAnnotation      = "scheduler.alpha.kubernetes.io/taints"
	nodeAvoidPodsAnnotation   = "scheduler.alpha.kubernetes.io/preferAvoidPods"
	gatePodPreemptionPolicy   = "InPlacePodVerticalScalingSchedulerPreemption"
	nodePodCIDRImmutableError = `node updates may not change podCIDR except from "" to valid`
)

var nodeDeclaredFeatureName = lazyRegexp(`^[A-Z][a-zA-Z0-9]*(\/[a-zA-Z][a-zA-Z0-9]*)*$`)

var nodeTaintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

// validateNode is ValidateNode but for the metadata checks every create
// gets.
func validateNode(obj runtime.Object) field.ErrorList {
	return withNodeDeclarative(nodeErrors(obj.(*corev1.Node)), nil, nil)
}

// validateNodeUpdate is ValidateNode then ValidateNodeUpdate. Upstream
// checks the new metadata as on create too; those errors are given here
// (they are metadata errors, reported once whatever their number).
func validateNodeUpdate(obj, old runtime.Object) field.ErrorList {
	node, was := obj.(*corev1.Node), old.(*corev1.Node)
	errs := ValidateObjectMeta(obj, false, apivalidation.NameIsDNSSubdomain)
	errs = append(errs, nodeErrors(node)...)
	return withNodeDeclarative(append(errs, nodeUpdateErrors(node, was)...), node, was)
}

// validateNodeStatusUpdate checks a nodes/status write: the metadata
// change and ValidateNodeUpdate (the spec is the stored one).
func validateNodeStatusUpdate(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
	errs := ValidateObjectMetaUpdate(obj, old)
	return withNodeDeclarative(append(errs, nodeUpdateErrors(obj.(*corev1.Node), old.(*corev1.Node))...), nil, nil)
}

// nodeErrors are ValidateNode's checks after the metadata.
func nodeErrors(node *corev1.Node) field.ErrorList {
	errs := nodeAnnotationErrors(node.Annotations)
	errs = append(errs, nodeTaintErrors(node.Spec.Taints, metadataPath.Child("taints"))...)
	errs = append(errs, nodeResourceErrors(&node.Status)...)
	if swap := node.Status.NodeInfo.Swap; swap != nil && swap.Capacity != nil && *swap.Capacity <= 0 {
		errs = append(errs, field.Invalid(metadataPath.Child("nodeSwapStatus", "capacity"), *swap.Capacity, "must be greater than zero").WithOrigin("minimum"))
	}
	errs = append(errs, nodeDeclaredFeatureErrors(node.Status.DeclaredFeatures)...)
	return append(errs, nodePodCIDRErrors(node.Spec.PodCIDRs)...)
}

// nodeUpdateErrors are ValidateNodeUpdate's checks after the metadata
// change: the annotations, resources and declared features again, no
// address twice, pod CIDRs and providerID fixed once set, the config
// source and status, the taints again, the external ID fixed.
func nodeUpdateErrors(node, old *corev1.Node) field.ErrorList {
	errs := nodeAnnotationErrors(node.Annotations)
	errs = append(errs, nodeResourceErrors(&node.Status)...)
	errs = append(errs, nodeDeclaredFeatureErrors(node.Status.DeclaredFeatures)...)
	seen := map[corev1.NodeAddress]bool{}
	for i, a := range node.Status.Addresses {
		if seen[a] {
			errs = append(errs, field.Duplicate(field.NewPath("status", "addresses").Index(i), internalNodeAddress(a)))
		}
		seen[a] = true
	}
	if len(old.Spec.PodCIDRs) > 0 {
		podCIDRs := specPath.Child("podCIDRs")
		if len(old.Spec.PodCIDRs) != len(node.Spec.PodCIDRs) {
			errs = append(errs, field.Forbidden(podCIDRs, nodePodCIDRImmutableError))
		} else {
			for i, cidr := range old.Spec.PodCIDRs {
				if cidr != node.Spec.PodCIDRs[i] {
					errs = append(errs, field.Forbidden(podCIDRs, nodePodCIDRImmutableError))
				}
			}
		}
	}
	if was, is := old.Spec.ProviderID, node.Spec.ProviderID; was != "" && is != "" && was != is {
		errs = append(errs, field.Invalid(specPath.Child("providerID"), nil, "field cannot be modified once set").WithOrigin("update"))
	} else if was != "" && is == "" {
		errs = append(errs, field.Invalid(specPath.Child("providerID"), nil, "field cannot be cleared once set").WithOrigin("update"))
	}
	if node.Spec.ConfigSource != nil {
		errs = append(errs, nodeConfigSourceSpecErrors(node.Spec.ConfigSource, specPath.Child("configSource"))...)
	}
	if node.Status.Config != nil {
		errs = append(errs, nodeConfigStatusErrors(node.Status.Config, field.NewPath("status", "config"))...)
	}
	errs = append(errs, nodeTaintErrors(node.Spec.Taints, metadataPath.Child("taints"))...)
	if node.Spec.DoNotUseExternalID != old.Spec.DoNotUseExternalID {
		errs = append(errs, field.Forbidden(specPath.Child("externalID"), "may not be updated"))
	}
	return errs
}

// withNodeDeclarative merges the handwritten errors with the enforced
// declarative one (withEnforcedDeclarative drops the handwritten errors
// that repeat an earlier message: an update checks the status twice): a
// podPreemptionPolicy set or changed while its gate is off (old nil on
// create, where the preparation already dropped it).
func withNodeDeclarative(errs field.ErrorList, node, old *corev1.Node) field.ErrorList {
	var declarative field.ErrorList
	if node != nil && old != nil && !(defaultGates{}).Enabled(gatePodPreemptionPolicy) {
		if p := node.Spec.PodPreemptionPolicy; p != nil && !apiequality.Semantic.DeepEqual(p, old.Spec.PodPreemptionPolicy) {
			declarative = append(declarative, field.Forbidden(specPath.Child("podPreemptionPolicy"), ""))
		}
	}
	return withEnforcedDeclarative(errs, declarative)
}

// nodeTaintErrors: a label-name key, a label value, a known effect, and no
// key twice with the same effect (reported once per repeat, the repeat's
// other checks done first).
func nodeTaintErrors(taints []corev1.Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[corev1.TaintEffect]sets.Set[string]{}
	for i, t := range taints {
		ip := p.Index(i)
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, ip.Child("key"))...)
		if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
			errs = append(errs, field.Invalid(ip.Child("value"), t.Value, strings.Join(msgs, ";")))
		}
		switch {
		case t.Effect == "":
			errs = append(errs, field.Required(ip.Child("effect"), ""))
		case !slices.Contains(nodeTaintEffects, t.Effect):
			errs = append(errs, field.NotSupported(ip.Child("effect"), t.Effect, nodeTaintEffects))
		}
		if seen[t.Effect].Has(t.Key) {
			dup := field.Duplicate(ip, internalTaint(t))
			dup.Detail = "taints must be unique by key and effect pair"
			errs = append(errs, dup)
			continue
		}
		if seen[t.Effect] == nil {
			seen[t.Effect] = sets.New[string]()
		}
		seen[t.Effect].Insert(t.Key)
	}
	return errs
}

// nodeAnnotationErrors checks the two scheduler annotations a Node may
// carry: taints and pods to avoid, as JSON.
func nodeAnnotationErrors(annotations map[string]string) field.ErrorList {
	p := metadataPath.Child("annotations")
	var errs field.ErrorList
	if raw := annotations[nodeTaintsAnnotation]; raw != "" {
		// Decoded into the internal type's shape, as upstream does: its
		// name and field names show in a decoding error.
		var internal []core.Taint
		if err := json.Unmarshal([]byte(raw), &internal); err != nil {
			errs = append(errs, field.Invalid(p, nodeTaintsAnnotation, err.Error()))
		} else {
			taints := make([]corev1.Taint, len(internal))
			for i, t := range internal {
				taints[i] = corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect), TimeAdded: t.TimeAdded}
			}
			errs = append(errs, nodeTaintErrors(taints, p.Child(nodeTaintsAnnotation))...)
		}
	}
	if raw := annotations[nodeAvoidPodsAnnotation]; raw != "" {
		var avoid corev1.AvoidPods
		if err := json.Unmarshal([]byte(raw), &avoid); err != nil {
			return append(errs, field.Invalid(p.Child("AvoidPods"), nodeAvoidPodsAnnotation, err.Error()))
		}
		for i, entry := range avoid.PreferAvoidPods {
			ep := p.Child(nodeAvoidPodsAnnotation).Index(i).Child("PodSignature")
			switch c := entry.PodSignature.PodController; {
			case c == nil:
				errs = append(errs, field.Required(ep, ""))
			case c.Controller == nil || !*c.Controller:
				// Upstream dereferences a missing controller flag and
				// fails; admitd refuses it as not a controller.
				errs = append(errs, field.Invalid(ep.Child("PodController", "Controller"), false, "must point to a controller"))
			}
		}
	}
	return errs
}

// nodeResourceErrors: capacity and allocatable quantities not negative,
// whole for integer resources (in name order; upstream's map order
// varies).
func nodeResourceErrors(status *corev1.NodeStatus) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name      string
		resources corev1.ResourceList
	}{{"capacity", status.Capacity}, {"allocatable", status.Allocatable}} {
		for _, name := range sortedResourceNames(list.resources) {
			errs = append(errs, validateResourceQuantityValue(name, list.resources[name], field.NewPath("status", list.name, string(name)))...)
		}
	}
	return errs
}

// nodeDeclaredFeatureErrors: each name an UpperCamelCase path of at most
// 253 characters, the list sorted and without repeats.
func nodeDeclaredFeatureErrors(features []string) field.ErrorList {
	p := field.NewPath("status", "declaredFeatures")
	var errs field.ErrorList
	for i, f := range features {
		switch {
		case len(f) > validation.DNS1123SubdomainMaxLength:
			errs = append(errs, field.Invalid(p.Index(i), f, fmt.Sprintf("invalid feature name %q: must be no more than %d characters", f, validation.DNS1123SubdomainMaxLength)))
		case !nodeDeclaredFeatureName().MatchString(f):
			errs = append(errs, field.Invalid(p.Index(i), f, fmt.Sprintf("invalid feature name %q: must start with an UpperCamelCase segment, with subsequent segments separated by '/' (e.g., MyFeature or MyFeature/mySubFeature), and contain only alphanumeric characters and slashes", f)))
		}
		if i+1 < len(features) {
			switch next := features[i+1]; {
			case f == next:
				errs = append(errs, field.Duplicate(p.Index(i+1), next))
			case f > next:
				errs = append(errs, field.Invalid(p.Index(i+1), next, "list must be sorted alphabetically"))
			}
		}
	}
	return errs
}

// nodePodCIDRErrors: legacy CIDRs (strict under StrictIPCIDRValidation),
// and at most one of each family.
func nodePodCIDRErrors(cidrs []string) field.ErrorList {
	p := specPath.Child("podCIDRs")
	var errs field.ErrorList
	strict := (defaultGates{}).Enabled(gateStrictIPCIDRValidation)
	for i, cidr := range cidrs {
		errs = append(errs, validation.IsValidCIDRForLegacyField(p.Index(i), cidr, strict, nil)...)
	}
	if len(cidrs) > 1 {
		dualStack, err := netutils.IsDualStackCIDRStrings(cidrs)
		if err != nil {
			errs = append(errs, field.InternalError(p, fmt.Errorf("invalid PodCIDRs. failed to check with dual stack with error:%v", err)))
		}
		if !dualStack || len(cidrs) > 2 {
			errs = append(errs, field.Invalid(p, cidrs, "may specify no more than one CIDR for each IP family"))
		}
	}
	return errs
}

// internalTaint is t in the shape of upstream's internal type, so a
// repeated taint renders in errors exactly as upstream's.
func internalTaint(t corev1.Taint) core.Taint {
	return core.Taint{Key: t.Key, Value: t.Value, Effect: core.TaintEffect(t.Effect), TimeAdded: t.TimeAdded}
}

// internalNodeAddressValue has the shape of upstream's internal
// NodeAddress (no json tags), for the same reason.
type internalNodeAddressValue struct {
	Type    corev1.NodeAddressType
	Address string
}

func internalNodeAddress(a corev1.NodeAddress) internalNodeAddressValue {
	return internalNodeAddressValue{Type: a.Type, Address: a.Address}
}
