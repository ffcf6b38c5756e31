package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of a ResourceSlice's spec, as upstream's
// pkg/apis/resource/validation (devices' attributes and capacity in
// dra_validate_device.go).

// attributeKeyMax is the longest attribute or capacity name: a domain, a
// slash and an identifier.
const attributeKeyMax = resourcev1.DeviceMaxDomainLength + 1 + resourcev1.DeviceMaxIDLength

func validateSliceSpec(s, old *resourcev1.ResourceSliceSpec) field.ErrorList {
	p := specPath
	errs := plainDriverName(s.Driver, p.Child("driver"))
	errs = append(errs, resourcePool(s.Pool, p.Child("pool"))...)
	if old != nil {
		errs = append(errs, immutable(s.Pool.Name, old.Pool.Name, p.Child("pool", "name"))...)
		errs = append(errs, immutable(s.Driver, old.Driver, p.Child("driver"))...)
		errs = append(errs, immutable(s.NodeName, old.NodeName, p.Child("nodeName"))...)
	}
	errs = append(errs, sliceNodes(s, p)...)
	if s.SharedCounters != nil && s.Devices != nil {
		errs = append(errs, field.Invalid(p, "", "only one of `sharedCounters` or `devices` is allowed"))
	}
	maxDevices := resourcev1.ResourceSliceMaxDevices
	if sliceUses(s, func(d *resourcev1.Device) bool { return len(d.Taints) > 0 || len(d.ConsumesCounters) > 0 }) || sliceUses(s, usesListAttributes) {
		maxDevices = resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures
	}
	errs = append(errs, eachUnique(s.Devices, maxDevices, p.Child("devices"), 0,
		func(d resourcev1.Device, p *field.Path) field.ErrorList {
			return device(d, oldDevice(old, d.Name), p, s.PerDeviceNodeSelection)
		}, func(d resourcev1.Device) string { return d.Name })...)
	errs = append(errs, eachUnique(s.SharedCounters, resourcev1.ResourceSliceMaxCounterSets, p.Child("sharedCounters"),
		sizeCovered|uniqueCovered, counterSet, func(c resourcev1.CounterSet) string { return c.Name })...)
	if s.PartitionTypeAttribute != nil {
		errs = append(errs, partitionTypeAttribute(s, p)...)
	}
	return append(errs, skipNodeOperations(s.SkipNodeOperations, p.Child("skipNodeOperations"))...)
}

// immutable is upstream's ValidateImmutableField.
func immutable(v, old any, p *field.Path) field.ErrorList {
	if deepEqual(v, old) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, v, fieldImmutable)}
}

func resourcePool(pool resourcev1.ResourcePool, p *field.Path) field.ErrorList {
	errs := poolName(pool.Name, p.Child("name"))
	if pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(p.Child("resourceSliceCount"), pool.ResourceSliceCount, "must be greater than zero"))
	}
	if pool.Generation < 0 {
		errs = append(errs, field.Invalid(p.Child("generation"), pool.Generation, "must be greater than or equal to zero"))
	}
	return errs
}

const sliceNodesMsg = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"

// sliceNodes: exactly one of nodeName (a node name), nodeSelector (one
// term), allNodes (true) and perDeviceNodeSelection (true).
func sliceNodes(s *resourcev1.ResourceSliceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	var set []string
	if s.NodeName != nil {
		if *s.NodeName != "" {
			set = append(set, "`nodeName`")
			errs = append(errs, nodeName(*s.NodeName, p.Child("nodeName"))...)
		} else {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *s.NodeName, "must be either unset or set to a non-empty string"))
		}
	}
	if s.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		errs = append(errs, nodeSelector(s.NodeSelector, p.Child("nodeSelector"))...)
		if len(s.NodeSelector.NodeSelectorTerms) != 1 {
			errs = append(errs, field.Invalid(p.Child("nodeSelector", "nodeSelectorTerms"), internalJSON(s.NodeSelector.NodeSelectorTerms),
				"must have exactly one node selector term"))
		}
	}
	errs = append(errs, trueFlag(s.AllNodes, "`allNodes`", p.Child("allNodes"), &set)...)
	errs = append(errs, trueFlag(s.PerDeviceNodeSelection, "`perDeviceNodeSelection`", p.Child("perDeviceNodeSelection"), &set)...)
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(p, sliceNodesMsg))
	case 1:
	default:
		errs = append(errs, field.Invalid(p, fmt.Sprintf("{%s}", strings.Join(set, ", ")), sliceNodesMsg+", but multiple fields are set"))
	}
	return errs
}

// trueFlag: a flag that is set must be true; a true one counts in set.
func trueFlag(v *bool, name string, p *field.Path, set *[]string) field.ErrorList {
	switch {
	case v == nil:
		return nil
	case *v:
		*set = append(*set, name)
		return nil
	}
	return field.ErrorList{field.Invalid(p, false, "must be either unset or set to true")}
}

func oldDevice(s *resourcev1.ResourceSliceSpec, name string) *resourcev1.Device {
	if s == nil {
		return nil
	}
	for i := range s.Devices {
		if s.Devices[i].Name == name {
			return &s.Devices[i]
		}
	}
	return nil
}

func counterSet(c resourcev1.CounterSet, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "").MarkCoveredByDeclarative())
	} else {
		errs = append(errs, dnsLabel(c.Name, p.Child("name")).MarkCoveredByDeclarative()...)
	}
	if len(c.Counters) == 0 {
		return append(errs, field.Required(p.Child("counters"), "").MarkCoveredByDeclarative())
	}
	return append(errs, eachEntry(c.Counters, resourcev1.ResourceSliceMaxCountersPerCounterSet, validation.DNS1123LabelMaxLength,
		p.Child("counters"), keysCovered, dnsLabel, noCheck[resourcev1.Counter])...)
}

// partitionTypeAttribute: the slice has devices consuming counters, and
// each of them has the named attribute (in the driver's domain it may be
// bare) as a string.
func partitionTypeAttribute(s *resourcev1.ResourceSliceSpec, p *field.Path) field.ErrorList {
	name := string(*s.PartitionTypeAttribute)
	if !sliceUses(s, func(d *resourcev1.Device) bool { return len(d.ConsumesCounters) > 0 }) {
		return field.ErrorList{field.Invalid(p.Child("partitionTypeAttribute"), name, "may only be set on a slice which declares devices that consume counters")}
	}
	if len(fullyQualifiedName(*s.PartitionTypeAttribute, nil)) > 0 {
		return nil // reported declaratively
	}
	bare, _ := strings.CutPrefix(name, s.Driver+"/")
	var errs field.ErrorList
	for i, d := range s.Devices {
		if len(d.ConsumesCounters) == 0 {
			continue
		}
		ap := p.Child("devices").Index(i).Child("attributes").Key(name)
		a, ok := d.Attributes[resourcev1.QualifiedName(name)]
		if !ok && bare != "" {
			a, ok = d.Attributes[resourcev1.QualifiedName(bare)]
		}
		switch {
		case !ok:
			errs = append(errs, field.Required(ap, "device consumes counters and `partitionTypeAttribute` names this attribute, so it must be set"))
		case a.StringValue == nil:
			errs = append(errs, field.Invalid(ap, internalJSON(a), "must be a string value because `partitionTypeAttribute` names this attribute"))
		}
	}
	return errs
}

// nodeSelector is core's rule of a node selector (upstream's
// ValidateNodeSelector with invalid label values refused).
func nodeSelector(s *corev1.NodeSelector, p *field.Path) field.ErrorList {
	tp := p.Child("nodeSelectorTerms")
	if len(s.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(tp, "must have at least one node selector term")}
	}
	var errs field.ErrorList
	for i, t := range s.NodeSelectorTerms {
		for j, r := range t.MatchExpressions {
			errs = append(errs, nodeSelectorRequirement(r, tp.Index(i).Child("matchExpressions").Index(j))...)
		}
		for j, r := range t.MatchFields {
			errs = append(errs, nodeFieldRequirement(r, tp.Index(i).Child("matchFields").Index(j))...)
		}
	}
	return errs
}

func nodeSelectorRequirement(r corev1.NodeSelectorRequirement, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(p.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			errs = append(errs, field.Forbidden(p.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(p.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		}
	default:
		errs = append(errs, field.Invalid(p.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	errs = append(errs, metav1validation.ValidateLabelName(r.Key, p.Child("key"))...)
	for i, v := range r.Values {
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(p.Child("values").Index(i), v, msg).WithOrigin("format=k8s-label-value"))
		}
	}
	return errs
}

func nodeFieldRequirement(r corev1.NodeSelectorRequirement, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(p.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
	default:
		errs = append(errs, field.Invalid(p.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	if r.Key != "metadata.name" {
		return append(errs, field.Invalid(p.Child("key"), r.Key, "not a valid field selector key"))
	}
	for i, v := range r.Values {
		errs = append(errs, nodeName(v, p.Child("values").Index(i))...)
	}
	return errs
}

var semverRe = lazyRegexp(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)
