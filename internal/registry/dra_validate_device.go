package registry

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/inf.v0"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of one device of a ResourceSlice, as upstream's
// pkg/apis/resource/validation.

// maxRequestPolicyValues is the most valid values a capacity's request
// policy may list (upstream's internal CapacityRequestPolicyDiscreteMaxOptions).
const maxRequestPolicyValues = 10

func device(d resourcev1.Device, old *resourcev1.Device, p *field.Path, perDevice *bool) field.ErrorList {
	errs := dnsLabel(d.Name, p.Child("name"))
	if n := len(d.Attributes) + len(d.Capacity); n > resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
		errs = append(errs, field.Invalid(p, n, fmt.Sprintf("the total number of attributes and capacities must not exceed %d",
			resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice)))
	}
	if n := attributeValues(d.Attributes); n > resourcev1.ResourceSliceMaxAttributeValuesPerDevice {
		errs = append(errs, field.Invalid(p, n, fmt.Sprintf("the total number of attribute values must not exceed %d",
			resourcev1.ResourceSliceMaxAttributeValuesPerDevice)))
	}
	errs = append(errs, eachEntry(d.Attributes, -1, attributeKeyMax, p.Child("attributes"), 0, attributeName, deviceAttribute)...)
	if old == nil || !deepEqual(old.Capacity, d.Capacity) {
		check := singleAllocationCapacity
		if d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations {
			check = multiAllocationCapacity
		}
		errs = append(errs, eachEntry(d.Capacity, -1, attributeKeyMax, p.Child("capacity"), 0, attributeName, check)...)
	}
	if old == nil || !deepEqual(old.Taints, d.Taints) {
		errs = append(errs, eachItem(d.Taints, resourcev1.DeviceTaintsMaxLength, p.Child("taints"), 0,
			func(t resourcev1.DeviceTaint, p *field.Path) field.ErrorList { return deviceTaint(t, nil, p) })...)
	}
	errs = append(errs, eachUnique(d.ConsumesCounters, resourcev1.ResourceSliceMaxDeviceCounterConsumptionsPerDevice,
		p.Child("consumesCounters"), sizeCovered|uniqueCovered, counterConsumption,
		func(c resourcev1.DeviceCounterConsumption) string { return c.CounterSet })...)
	errs = append(errs, deviceNodes(d, p, perDevice != nil && *perDevice)...)
	errs = append(errs, bindingConditions(d.BindingConditions, d.BindingFailureConditions, p)...)
	return append(errs, nodeAllocatableResources(d.NodeAllocatableResources, d.Capacity, p.Child("nodeAllocatableResources"))...)
}

// attributeValues counts a device's attribute values, each item of a list
// one.
func attributeValues(as map[resourcev1.QualifiedName]resourcev1.DeviceAttribute) int {
	n := 0
	for _, a := range as {
		items := len(a.BoolValues) + len(a.IntValues) + len(a.StringValues) + len(a.VersionValues)
		n += max(items, 1)
	}
	return n
}

const perDeviceNodesMsg = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"

// deviceNodes: with per-device node selection, exactly one of nodeName,
// nodeSelector and allNodes (true); without, none of them.
func deviceNodes(d resourcev1.Device, p *field.Path, perDevice bool) field.ErrorList {
	if !perDevice {
		if d.NodeName != nil || d.NodeSelector != nil || d.AllNodes != nil {
			return field.ErrorList{field.Invalid(p, nil, "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec")}
		}
		return nil
	}
	var errs field.ErrorList
	var set []string
	if d.NodeName != nil {
		if *d.NodeName != "" {
			set = append(set, "`nodeName`")
			errs = append(errs, nodeName(*d.NodeName, p.Child("nodeName"))...)
		} else {
			errs = append(errs, field.Invalid(p.Child("nodeName"), "", "must not be empty"))
		}
	}
	if d.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		errs = append(errs, nodeSelector(d.NodeSelector, p.Child("nodeSelector"))...)
	}
	errs = append(errs, trueFlag(d.AllNodes, "`allNodes`", p.Child("allNodes"), &set)...)
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(p, perDeviceNodesMsg))
	case 1:
	default:
		errs = append(errs, field.Invalid(p, fmt.Sprintf("{%s}", strings.Join(set, ", ")), perDeviceNodesMsg))
	}
	return errs
}

// deviceAttribute: exactly one value; strings and versions at most 64
// characters, versions semantic; lists not empty.
func deviceAttribute(a resourcev1.DeviceAttribute, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	if a.BoolValue != nil {
		n++
	}
	if a.IntValue != nil {
		n++
	}
	if a.StringValue != nil {
		n++
		errs = append(errs, attributeString(*a.StringValue, p.Child("string"))...)
	}
	if a.VersionValue != nil {
		n++
		errs = append(errs, attributeVersion(*a.VersionValue, p.Child("version"))...)
	}
	errs = append(errs, attributeList(a.BoolValues, p.Child("bools"), &n, noCheck[bool])...)
	errs = append(errs, attributeList(a.IntValues, p.Child("ints"), &n, noCheck[int64])...)
	errs = append(errs, attributeList(a.StringValues, p.Child("strings"), &n, func(s string, p *field.Path) field.ErrorList {
		return attributeString(s, p).WithOrigin("maxBytes").MarkCoveredByDeclarative()
	})...)
	errs = append(errs, attributeList(a.VersionValues, p.Child("versions"), &n, attributeVersion)...)
	switch n {
	case 0:
		errs = append(errs, field.Invalid(p, "", "exactly one value must be specified").WithOrigin("union").MarkCoveredByDeclarative())
	case 1:
	default:
		errs = append(errs, field.Invalid(p, internalJSON(a), "exactly one value must be specified").WithOrigin("union").MarkCoveredByDeclarative())
	}
	return errs
}

// attributeList checks a list value that is set (counting it in n): not
// empty, and each item.
func attributeList[T any](list []T, p *field.Path, n *int, check func(T, *field.Path) field.ErrorList) field.ErrorList {
	if list == nil {
		return nil
	}
	*n++
	var errs field.ErrorList
	if len(list) == 0 {
		errs = append(errs, field.Invalid(p, list, "must not be empty if specified"))
	}
	for i, item := range list {
		errs = append(errs, check(item, p.Index(i))...)
	}
	return errs
}

func attributeString(s string, p *field.Path) field.ErrorList {
	if len(s) > resourcev1.DeviceAttributeMaxValueLength {
		return field.ErrorList{field.TooLong(p, "", resourcev1.DeviceAttributeMaxValueLength)}
	}
	return nil
}

func attributeVersion(s string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !semverRe().MatchString(s) {
		errs = append(errs, field.Invalid(p, s, "must be a string compatible with semver.org spec 2.0.0"))
	}
	return append(errs, attributeString(s, p)...)
}

// singleAllocationCapacity: a device allocated once has no request policy.
func singleAllocationCapacity(c resourcev1.DeviceCapacity, p *field.Path) field.ErrorList {
	if c.RequestPolicy != nil {
		return field.ErrorList{field.Forbidden(p.Child("requestPolicy"), "allowMultipleAllocations must be true")}
	}
	return nil
}

// multiAllocationCapacity: a request policy has valid values or a valid
// range, not both.
func multiAllocationCapacity(c resourcev1.DeviceCapacity, p *field.Path) field.ErrorList {
	pol := c.RequestPolicy
	if pol == nil {
		return nil
	}
	p = p.Child("requestPolicy")
	switch {
	case len(pol.ValidValues) > 0 && pol.ValidRange != nil:
		return field.ErrorList{field.Forbidden(p, `exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time`)}
	case len(pol.ValidValues) > 0:
		if pol.Default == nil {
			return field.ErrorList{field.Required(p.Child("default"), "required when validValues is defined")}
		}
		return validValues(*pol.Default, c.Value, pol.ValidValues, p.Child("validValues"))
	case pol.ValidRange != nil:
		if pol.Default == nil {
			return field.ErrorList{field.Required(p.Child("default"), "required when validRange is defined")}
		}
		return validRange(*pol.Default, c.Value, *pol.ValidRange, p.Child("validRange"))
	}
	return nil
}

// validValues: ascending, distinct, within the capacity, the default
// among them.
func validValues(def, capacity resource.Quantity, values []resource.Quantity, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range len(values) - 1 {
		if values[i].Cmp(values[i+1]) > 0 {
			errs = append(errs, field.Invalid(p.Index(i+1), values[i+1].String(), "values must be sorted in ascending order"))
		}
	}
	key := func(q resource.Quantity) string { return strconv.FormatInt(q.Value(), 10) }
	if draGates.Enabled(gateFractionalCapacity) {
		key = func(q resource.Quantity) string { return q.AsDec().String() }
	}
	found := false
	errs = append(errs, eachUnique(values, maxRequestPolicyValues, p, 0,
		func(v resource.Quantity, p *field.Path) field.ErrorList {
			if v.Cmp(def) == 0 {
				found = true
			}
			if v.Cmp(capacity) > 0 {
				return field.ErrorList{field.Invalid(p, v.String(), fmt.Sprintf("option is larger than capacity value: %s", capacity.String()))}
			}
			return nil
		}, key)...)
	if !found {
		errs = append(errs, field.Invalid(p, def.String(), "default value is not valid according to the requestPolicy"))
	}
	return errs
}

// validRange: a minimum within the capacity, the default and an optional
// maximum between it and the capacity, and a positive step that fits and
// that the default and maximum are multiples of.
func validRange(def, capacity resource.Quantity, r resourcev1.CapacityRequestPolicyRange, p *field.Path) field.ErrorList {
	if r.Min == nil {
		return field.ErrorList{field.Required(p.Child("min"), "required when validRange is defined")}
	}
	errs := rangeBounds(def, capacity, r, p)
	milli := false
	if draGates.Enabled(gateFractionalCapacity) {
		milli = rangeFractional(r) || fractional(def)
		if milli {
			if unsafe := notMilli(def, r, p); len(unsafe) > 0 {
				return append(errs, unsafe...)
			}
		}
	}
	if r.Step == nil {
		return errs
	}
	step := *r.Step
	if step.Sign() <= 0 {
		return append(errs, field.Invalid(p.Child("step"), step.String(), "must be greater than zero"))
	}
	next := r.Min.DeepCopy()
	next.Add(step)
	if next.Cmp(capacity) > 0 {
		errs = append(errs, field.Invalid(p.Child("step"), step.String(), fmt.Sprintf("one step %s is larger than capacity value: %s", next.String(), capacity.String())))
	}
	if !milli {
		if unsafe := outsideInt64(def, r, p); len(unsafe) > 0 {
			return append(errs, unsafe...)
		}
	}
	errs = append(errs, stepMultiple(def, *r.Min, step, milli, p.Child("step"))...)
	if r.Max != nil {
		errs = append(errs, stepMultiple(*r.Max, *r.Min, step, milli, p.Child("step"))...)
	}
	return errs
}

func rangeBounds(def, capacity resource.Quantity, r resourcev1.CapacityRequestPolicyRange, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.Min.Cmp(capacity) > 0 {
		errs = append(errs, field.Invalid(p.Child("min"), r.Min.String(), fmt.Sprintf("min is larger than capacity value: %s", capacity.String())))
	}
	if def.Cmp(*r.Min) < 0 {
		errs = append(errs, field.Invalid(p.Child("default"), def.String(), fmt.Sprintf("default is less than min: %s", r.Min.String())))
	}
	if r.Max == nil {
		return errs
	}
	if r.Min.Cmp(*r.Max) > 0 {
		errs = append(errs, field.Invalid(p.Child("max"), r.Min.String(), fmt.Sprintf("min is larger than max: %s", r.Max.String())))
	}
	if r.Max.Cmp(capacity) > 0 {
		errs = append(errs, field.Invalid(p.Child("max"), r.Max.String(), fmt.Sprintf("max is larger than capacity value: %s", capacity.String())))
	}
	if def.Cmp(*r.Max) > 0 {
		errs = append(errs, field.Invalid(p.Child("default"), def.String(), fmt.Sprintf("default is more than max: %s", r.Max.String())))
	}
	return errs
}

// rangeQuantities are the default and the bounds of a range, by name.
func rangeQuantities(def resource.Quantity, r resourcev1.CapacityRequestPolicyRange) []struct {
	q    *resource.Quantity
	name string
} {
	return []struct {
		q    *resource.Quantity
		name string
	}{{&def, "default"}, {r.Min, "min"}, {r.Max, "max"}, {r.Step, "step"}}
}

// notMilli: each value must be exact in thousandths.
func notMilli(def resource.Quantity, r resourcev1.CapacityRequestPolicyRange, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, v := range rangeQuantities(def, r) {
		if v.q != nil && v.q.Cmp(*resource.NewMilliQuantity(v.q.MilliValue(), v.q.Format)) != 0 {
			errs = append(errs, field.Invalid(p.Child(v.name), v.q.String(), "value cannot be represented as a milli value"))
		}
	}
	return errs
}

// outsideInt64: each value must be within [0, MaxInt64] for whole-number
// arithmetic.
func outsideInt64(def resource.Quantity, r resourcev1.CapacityRequestPolicyRange, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, v := range rangeQuantities(def, r) {
		switch {
		case v.q == nil:
		case v.q.Sign() < 0:
			errs = append(errs, field.Invalid(p.Child(v.name), v.q.String(), apivalidation.IsNegativeErrorMsg))
		case v.q.CmpInt64(math.MaxInt64) > 0:
			errs = append(errs, field.Invalid(p.Child(v.name), v.q.String(), "must not be larger than 9223372036854775807"))
		}
	}
	return errs
}

func stepMultiple(v, min, step resource.Quantity, milli bool, p *field.Path) field.ErrorList {
	val, lo, st := v.Value(), min.Value(), step.Value()
	if milli {
		val, lo, st = v.MilliValue(), min.MilliValue(), step.MilliValue()
	}
	if (val-lo)%st != 0 {
		return field.ErrorList{field.Invalid(p, v.String(), fmt.Sprintf("value is not a multiple of a given step (%s) from (%s)", step.String(), min.String()))}
	}
	return nil
}

func rangeFractional(r resourcev1.CapacityRequestPolicyRange) bool {
	for _, q := range []*resource.Quantity{r.Min, r.Max, r.Step} {
		if q != nil && fractional(*q) {
			return true
		}
	}
	return false
}

func fractional(q resource.Quantity) bool {
	d := q.AsDec()
	return d.Cmp(new(inf.Dec).Round(d, 0, inf.RoundDown)) != 0
}

func counterConsumption(c resourcev1.DeviceCounterConsumption, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.CounterSet == "" {
		errs = append(errs, field.Required(p.Child("counterSet"), "").MarkCoveredByDeclarative())
	} else {
		errs = append(errs, dnsLabel(c.CounterSet, p.Child("counterSet")).MarkCoveredByDeclarative()...)
	}
	if len(c.Counters) == 0 {
		return append(errs, field.Required(p.Child("counters"), "").MarkCoveredByDeclarative())
	}
	return append(errs, eachEntry(c.Counters, resourcev1.ResourceSliceMaxCountersPerDeviceCounterConsumption,
		validation.DNS1123LabelMaxLength, p.Child("counters"), keysCovered, dnsLabel, noCheck[resourcev1.Counter])...)
}

// nodeAllocatableResources: cpu, memory or huge pages, each mapped from a
// capacity of the device or with an overhead.
func nodeAllocatableResources(m map[corev1.ResourceName]resourcev1.NodeAllocatableResource, capacity map[resourcev1.QualifiedName]resourcev1.DeviceCapacity, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, r := range m {
		kp := p.Key(string(name))
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory && !isHugePages(name) {
			errs = append(errs, field.Invalid(kp, name, "must be a node allocatable resource name"))
		}
		if r.Mapping == nil && r.Overhead == nil {
			errs = append(errs, field.Required(kp, "at least one of mapping or overhead must be set"))
		}
		if r.Mapping != nil {
			errs = append(errs, allocatableMapping(r.Mapping, capacity, kp.Child("mapping"))...)
		}
		if r.Overhead != nil {
			errs = append(errs, allocatableOverhead(r.Overhead, kp.Child("overhead"))...)
		}
	}
	return errs
}

func allocatableMapping(m *resourcev1.NodeAllocatableMapping, capacity map[resourcev1.QualifiedName]resourcev1.DeviceCapacity, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.CapacityKey != nil {
		if *m.CapacityKey == "" {
			errs = append(errs, field.Invalid(p.Child("capacityKey"), "", "capacityKey must not be an empty string"))
		} else if _, ok := capacity[*m.CapacityKey]; !ok {
			errs = append(errs, field.NotFound(p.Child("capacityKey"), *m.CapacityKey))
		}
		if m.CapacityMultiplier == nil {
			errs = append(errs, field.Required(p.Child("capacityMultiplier"), "capacityMultiplier is required when capacityKey is set").
				WithOrigin("dependentRequired").MarkCoveredByDeclarative())
		} else if m.CapacityMultiplier.Sign() <= 0 {
			errs = append(errs, field.Invalid(p.Child("capacityMultiplier"), m.CapacityMultiplier.String(), "must be positive"))
		}
	}
	if m.DeviceMultiplier != nil && m.DeviceMultiplier.Sign() <= 0 {
		errs = append(errs, field.Invalid(p.Child("deviceMultiplier"), m.DeviceMultiplier.String(), "must be positive"))
	}
	if m.CapacityMultiplier != nil && m.CapacityKey == nil {
		errs = append(errs, field.Required(p.Child("capacityKey"), "capacityKey is required when capacityMultiplier is set").
			WithOrigin("dependentRequired").MarkCoveredByDeclarative())
	}
	return errs
}

func allocatableOverhead(o *resourcev1.NodeAllocatableOverhead, p *field.Path) field.ErrorList {
	if o.PerPod == nil && o.PerContainer == nil {
		return field.ErrorList{field.Invalid(p, "", "at least one of perPod or perContainer must be set")}
	}
	var errs field.ErrorList
	if o.PerPod != nil && o.PerPod.Sign() < 0 {
		errs = append(errs, field.Invalid(p.Child("perPod"), o.PerPod.String(), "must be non-negative"))
	}
	if o.PerContainer != nil && o.PerContainer.Sign() < 0 {
		errs = append(errs, field.Invalid(p.Child("perContainer"), o.PerContainer.String(), "must be non-negative"))
	}
	return errs
}
