package registry

import (
	"context"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The declarative rules of claim status and of ResourceSlices.

var (
	reservedRule = list[resourcev1.ResourceClaimConsumerReference]{mark: beta, max: 256,
		key: func(a, b *resourcev1.ResourceClaimConsumerReference) bool { return a.UID == b.UID }}
	deviceStatusRule = list[resourcev1.AllocatedDeviceStatus]{mark: beta, key: func(a, b *resourcev1.AllocatedDeviceStatus) bool {
		return a.Driver == b.Driver && a.Device == b.Device && a.Pool == b.Pool &&
			(a.ShareID == nil) == (b.ShareID == nil) && (a.ShareID == nil || *a.ShareID == *b.ShareID)
	}, each: declareDeviceStatus}
	resultsRule      = list[resourcev1.DeviceRequestAllocationResult]{mark: beta, max: 32, each: declareResult}
	allocConfigRule  = list[resourcev1.DeviceAllocationConfiguration]{mark: beta, max: 64, each: declareAllocationConfig}
	bindingCondsRule = list[string]{mark: beta, max: 4}
	skipRule         = list[resourcev1.SkipNodeOperation]{mark: standard, set: true, direct: true,
		each: func(ctx context.Context, op operation.Operation, p *field.Path, v, old *resourcev1.SkipNodeOperation) field.ErrorList {
			return skipEnum(ctx, op, p, v, old)
		}}
	ipsRule = list[string]{mark: beta, max: 16, set: true}
)

func declareClaimStatus(op operation.Operation, s, old *resourcev1.ResourceClaimStatus) field.ErrorList {
	p, correlated := statusFld, old != nil
	var errs field.ErrorList
	var oldAlloc *resourcev1.AllocationResult
	if old != nil {
		oldAlloc = old.Allocation
	}
	if !sameOnUpdate(op, correlated, s.Allocation, oldAlloc) && s.Allocation != nil {
		ap := p.Child("allocation")
		if upd := validate.UpdatePointer(dvCtx, op, ap, s.Allocation, oldAlloc, validate.NoModify); len(upd) > 0 {
			errs = beta(upd).MarkShortCircuit()
		} else {
			errs = declareAllocation(op, ap, s.Allocation, oldAlloc)
		}
	}
	errs = append(errs, reservedRule.check(op, p.Child("reservedFor"), s.ReservedFor,
		oldSlice(old, func(o *resourcev1.ResourceClaimStatus) []resourcev1.ResourceClaimConsumerReference {
			return o.ReservedFor
		}), correlated)...)
	return append(errs, deviceStatusRule.check(op, p.Child("devices"), s.Devices,
		oldSlice(old, func(o *resourcev1.ResourceClaimStatus) []resourcev1.AllocatedDeviceStatus { return o.Devices }), correlated)...)
}

func declareAllocation(op operation.Operation, p *field.Path, a, old *resourcev1.AllocationResult) field.ErrorList {
	oldDevices := oldField(old, func(o *resourcev1.AllocationResult) *resourcev1.DeviceAllocationResult { return &o.Devices })
	if sameOnUpdate(op, old != nil, &a.Devices, oldDevices) {
		return nil
	}
	p = p.Child("devices")
	errs := resultsRule.check(op, p.Child("results"), a.Devices.Results,
		oldSlice(oldDevices, func(o *resourcev1.DeviceAllocationResult) []resourcev1.DeviceRequestAllocationResult {
			return o.Results
		}), old != nil)
	return append(errs, allocConfigRule.check(op, p.Child("config"), a.Devices.Config,
		oldSlice(oldDevices, func(o *resourcev1.DeviceAllocationResult) []resourcev1.DeviceAllocationConfiguration { return o.Config }), old != nil)...)
}

func declareResult(_ context.Context, op operation.Operation, p *field.Path, r, old *resourcev1.DeviceRequestAllocationResult) field.ErrorList {
	var o resourcev1.DeviceRequestAllocationResult
	var oldDriver, oldPool *string
	var oldShare *types.UID
	if old != nil {
		o, oldDriver, oldPool, oldShare = *old, &old.Driver, &old.Pool, old.ShareID
	}
	c := old != nil
	errs := value(op, p.Child("driver"), &r.Driver, oldDriver, true, beta, validate.LongNameCaseless[string], maxLength63[string])
	errs = append(errs, value(op, p.Child("pool"), &r.Pool, oldPool, true, beta, validate.ResourcePoolName[string])...)
	errs = append(errs, list[resourcev1.DeviceToleration]{mark: beta, each: declareToleration}.check(op, p.Child("tolerations"), r.Tolerations, o.Tolerations, c)...)
	errs = append(errs, bindingCondsRule.check(op, p.Child("bindingConditions"), r.BindingConditions, o.BindingConditions, c)...)
	errs = append(errs, bindingCondsRule.check(op, p.Child("bindingFailureConditions"), r.BindingFailureConditions, o.BindingFailureConditions, c)...)
	errs = append(errs, pointer(op, p.Child("shareID"), r.ShareID, oldShare, c, beta, validate.UUID[types.UID])...)
	return append(errs, skipRule.check(op, p.Child("skipNodeOperations"), r.SkipNodeOperations, o.SkipNodeOperations, c)...)
}

func declareAllocationConfig(_ context.Context, op operation.Operation, p *field.Path, c, old *resourcev1.DeviceAllocationConfiguration) field.ErrorList {
	var oldSource *resourcev1.AllocationConfigSource
	if old != nil {
		oldSource = &old.Source
	}
	errs := value(op, p.Child("source"), &c.Source, oldSource, true, beta, sourceEnum)
	errs = append(errs, refsRule.check(op, p.Child("requests"), c.Requests, oldSlice(old, func(o *resourcev1.DeviceAllocationConfiguration) []string { return o.Requests }), old != nil)...)
	oldConf := oldField(old, func(o *resourcev1.DeviceAllocationConfiguration) *resourcev1.DeviceConfiguration {
		return &o.DeviceConfiguration
	})
	if sameOnUpdate(op, old != nil, &c.DeviceConfiguration, oldConf) {
		return errs
	}
	return append(errs, declareConfiguration(op, p, &c.DeviceConfiguration, oldConf)...)
}

func declareDeviceStatus(_ context.Context, op operation.Operation, p *field.Path, d, old *resourcev1.AllocatedDeviceStatus) field.ErrorList {
	var oldShare *string
	var oldNet *resourcev1.NetworkDeviceData
	if old != nil {
		oldShare, oldNet = old.ShareID, old.NetworkData
	}
	errs := pointer(op, p.Child("shareID"), d.ShareID, oldShare, old != nil, beta, validate.UUID[string])
	if sameOnUpdate(op, old != nil, d.NetworkData, oldNet) || d.NetworkData == nil {
		return errs
	}
	n, np := d.NetworkData, p.Child("networkData")
	var o resourcev1.NetworkDeviceData
	var oldName, oldHW *string
	if oldNet != nil {
		o, oldName, oldHW = *oldNet, &oldNet.InterfaceName, &oldNet.HardwareAddress
	}
	errs = append(errs, value(op, np.Child("interfaceName"), &n.InterfaceName, oldName, false, beta, maxBytes[string](256))...)
	errs = append(errs, ipsRule.check(op, np.Child("ips"), n.IPs, o.IPs, oldNet != nil)...)
	return append(errs, value(op, np.Child("hardwareAddress"), &n.HardwareAddress, oldHW, false, beta, maxBytes[string](128))...)
}

func maxBytes[T ~string](n int) validate.ValidateFunc[*T] {
	return func(ctx context.Context, op operation.Operation, p *field.Path, v, old *T) field.ErrorList {
		return validate.MaxBytes(ctx, op, p, v, old, n)
	}
}

var (
	slicesDevicesRule = list[resourcev1.Device]{mark: beta, each: declareDevice}
	counterSetsRule   = list[resourcev1.CounterSet]{mark: beta, max: 8,
		key: func(a, b *resourcev1.CounterSet) bool { return a.Name == b.Name }, each: declareCounterSet}
	consumesRule = list[resourcev1.DeviceCounterConsumption]{mark: beta, max: 2,
		key: func(a, b *resourcev1.DeviceCounterConsumption) bool { return a.CounterSet == b.CounterSet }, each: declareConsumption}
	taintsRule = list[resourcev1.DeviceTaint]{mark: beta, each: declareTaintFunc}
)

// declareSlice: devices, counter sets, the partition type attribute (off
// with its gate: forbidden), operations to skip.
func declareSlice(op operation.Operation, s, old *resourcev1.ResourceSlice) field.ErrorList {
	oldSpec := oldField(old, func(o *resourcev1.ResourceSlice) *resourcev1.ResourceSliceSpec { return &o.Spec })
	if sameOnUpdate(op, old != nil, &s.Spec, oldSpec) {
		return nil
	}
	sp, p, c := &s.Spec, specPath, old != nil
	var o resourcev1.ResourceSliceSpec
	if oldSpec != nil {
		o = *oldSpec
	}
	errs := slicesDevicesRule.check(op, p.Child("devices"), sp.Devices, o.Devices, c)
	errs = append(errs, counterSetsRule.check(op, p.Child("sharedCounters"), sp.SharedCounters, o.SharedCounters, c)...)
	errs = append(errs, partitionType(op, p.Child("partitionTypeAttribute"), sp.PartitionTypeAttribute, o.PartitionTypeAttribute, c)...)
	return append(errs, skipRule.check(op, p.Child("skipNodeOperations"), sp.SkipNodeOperations, o.SkipNodeOperations, c)...)
}

func partitionType(op operation.Operation, p *field.Path, v, old *resourcev1.FullyQualifiedName, correlated bool) field.ErrorList {
	if correlated && op.Type == operation.Update && (v == old || v != nil && old != nil && *v == *old) {
		return nil
	}
	if v == nil {
		return nil
	}
	if !draGates.Enabled(gatePartitionType) {
		return validate.ForbiddenPointer(dvCtx, op, p, v, old).MarkShortCircuit()
	}
	return validate.ResourceFullyQualifiedName(dvCtx, op, p, v, old)
}

func declareCounterSet(_ context.Context, op operation.Operation, p *field.Path, c, old *resourcev1.CounterSet) field.ErrorList {
	var oldName *string
	var oldCounters map[string]resourcev1.Counter
	if old != nil {
		oldName, oldCounters = &old.Name, old.Counters
	}
	errs := value(op, p.Child("name"), &c.Name, oldName, true, beta, validate.ShortName[string])
	return append(errs, counterNames(op, p.Child("counters"), c.Counters, oldCounters, old != nil)...)
}

// counterNames: counters are required, each named with a short name.
func counterNames(op operation.Operation, p *field.Path, m, old map[string]resourcev1.Counter, correlated bool) field.ErrorList {
	if sameOnUpdate(op, correlated, m, old) {
		return nil
	}
	if len(m) == 0 {
		return beta(validate.RequiredMap(dvCtx, op, p, m, old)).MarkShortCircuit()
	}
	return beta(validate.EachMapKey(dvCtx, op, p, m, old, validate.ShortName[string]))
}

func declareConsumption(_ context.Context, op operation.Operation, p *field.Path, c, old *resourcev1.DeviceCounterConsumption) field.ErrorList {
	var o resourcev1.DeviceCounterConsumption
	var oldSet *string
	if old != nil {
		o, oldSet = *old, &old.CounterSet
	}
	errs := value(op, p.Child("counterSet"), &c.CounterSet, oldSet, true, beta, validate.ShortName[string])
	errs = append(errs, counterNames(op, p.Child("counters"), c.Counters, o.Counters, old != nil)...)
	return append(errs, compatibilityGroups(op, p.Child("compatibilityGroups"), c.CompatibilityGroups, o.CompatibilityGroups, old != nil)...)
}

// compatibilityGroups: at most 2 distinct short names (each checked
// before the repeats).
func compatibilityGroups(op operation.Operation, p *field.Path, v, old []string, correlated bool) field.ErrorList {
	if sameOnUpdate(op, correlated, v, old) || len(v) == 0 {
		return nil
	}
	if errs := validate.MaxItems(dvCtx, op, p, v, old, resourcev1.DeviceCompatibilityGroupsMaxSize); len(errs) > 0 {
		return errs.MarkShortCircuit()
	}
	errs := validate.EachValSliceVal(dvCtx, op, p, v, old, directEqual[string], nil, validate.ShortName[string])
	return append(errs, validate.ValSliceUnique(dvCtx, op, p, v, old, directEqual[string])...)
}

func declareDevice(_ context.Context, op operation.Operation, p *field.Path, d, old *resourcev1.Device) field.ErrorList {
	var o resourcev1.Device
	if old != nil {
		o = *old
	}
	c := old != nil
	var errs field.ErrorList
	if !sameOnUpdate(op, c, d.Attributes, o.Attributes) && len(d.Attributes) > 0 {
		errs = validate.EachMapVal(dvCtx, op, p.Child("attributes"), d.Attributes, o.Attributes, validate.SemanticDeepEqual, declareAttribute)
	}
	errs = append(errs, consumesRule.check(op, p.Child("consumesCounters"), d.ConsumesCounters, o.ConsumesCounters, c)...)
	errs = append(errs, taintsRule.check(op, p.Child("taints"), d.Taints, o.Taints, c)...)
	errs = append(errs, bindingCondsRule.check(op, p.Child("bindingConditions"), d.BindingConditions, o.BindingConditions, c)...)
	errs = append(errs, bindingCondsRule.check(op, p.Child("bindingFailureConditions"), d.BindingFailureConditions, o.BindingFailureConditions, c)...)
	if !sameOnUpdate(op, c, d.NodeAllocatableResources, o.NodeAllocatableResources) && len(d.NodeAllocatableResources) > 0 {
		errs = append(errs, validate.EachMapVal(dvCtx, op, p.Child("nodeAllocatableResources"), d.NodeAllocatableResources,
			o.NodeAllocatableResources, validate.SemanticDeepEqual, declareAllocatable)...)
	}
	return errs
}

var attributeUnion = validate.NewUnionMembership(validate.NewUnionMember("int"), validate.NewUnionMember("bool"),
	validate.NewUnionMember("string"), validate.NewUnionMember("version"), validate.NewUnionMember("ints"),
	validate.NewUnionMember("bools"), validate.NewUnionMember("strings"), validate.NewUnionMember("versions"))

// declareAttribute: exactly one value is set (an empty list counts as
// unset).
func declareAttribute(_ context.Context, op operation.Operation, p *field.Path, a, old *resourcev1.DeviceAttribute) field.ErrorList {
	set := func(f func(*resourcev1.DeviceAttribute) bool) validate.ExtractorFn[*resourcev1.DeviceAttribute, bool] {
		return func(a *resourcev1.DeviceAttribute) bool { return a != nil && f(a) }
	}
	return beta(validate.Union(dvCtx, op, p, a, old, attributeUnion,
		set(func(a *resourcev1.DeviceAttribute) bool { return a.IntValue != nil }),
		set(func(a *resourcev1.DeviceAttribute) bool { return a.BoolValue != nil }),
		set(func(a *resourcev1.DeviceAttribute) bool { return a.StringValue != nil }),
		set(func(a *resourcev1.DeviceAttribute) bool { return a.VersionValue != nil }),
		set(func(a *resourcev1.DeviceAttribute) bool { return len(a.IntValues) != 0 }),
		set(func(a *resourcev1.DeviceAttribute) bool { return len(a.BoolValues) != 0 }),
		set(func(a *resourcev1.DeviceAttribute) bool { return len(a.StringValues) != 0 }),
		set(func(a *resourcev1.DeviceAttribute) bool { return len(a.VersionValues) != 0 })))
}

var mappingUnion = validate.NewUnionMembership(validate.NewUnionMember("capacityKey"), validate.NewUnionMember("deviceMultiplier"))

// declareAllocatable: a mapping is from a capacity or per device, not both.
func declareAllocatable(_ context.Context, op operation.Operation, p *field.Path, r, old *resourcev1.NodeAllocatableResource) field.ErrorList {
	var oldMapping *resourcev1.NodeAllocatableMapping
	if old != nil {
		oldMapping = old.Mapping
	}
	if sameOnUpdate(op, old != nil, r.Mapping, oldMapping) || r.Mapping == nil {
		return nil
	}
	return validate.Union(dvCtx, op, p.Child("mapping"), r.Mapping, oldMapping, mappingUnion,
		func(m *resourcev1.NodeAllocatableMapping) bool { return m != nil && m.CapacityKey != nil },
		func(m *resourcev1.NodeAllocatableMapping) bool { return m != nil && m.DeviceMultiplier != nil })
}
