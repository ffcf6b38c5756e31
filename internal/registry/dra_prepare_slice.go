package registry

import (
	resourcev1 "k8s.io/api/resource/v1"
)

// dropDisabledSliceFields clears the fields of disabled gates that the
// stored spec (nil on create) does not use, as upstream's ResourceSlice
// strategy.
func dropDisabledSliceFields(s, old *resourcev1.ResourceSliceSpec, gates FeatureGates) {
	devs := s.Devices
	each := func(f func(*resourcev1.Device)) {
		for i := range devs {
			f(&devs[i])
		}
	}
	if !gates.Enabled(gateDeviceTaints) && !sliceUses(old, func(d *resourcev1.Device) bool { return len(d.Taints) > 0 }) {
		each(func(d *resourcev1.Device) { d.Taints = nil })
	}
	if !gates.Enabled(gatePartitionableDevices) && !slicePartitions(old) {
		s.SharedCounters, s.PerDeviceNodeSelection = nil, nil
		each(func(d *resourcev1.Device) {
			d.ConsumesCounters, d.NodeName, d.NodeSelector, d.AllNodes = nil, nil, nil, nil
		})
	}
	if !(gates.Enabled(gateBindingConditions) && gates.Enabled(gateDeviceStatus)) && !sliceUses(old, func(d *resourcev1.Device) bool {
		return len(d.BindingConditions) > 0 || len(d.BindingFailureConditions) > 0 || d.BindsToNode != nil
	}) {
		each(func(d *resourcev1.Device) {
			d.BindingConditions, d.BindingFailureConditions, d.BindsToNode = nil, nil, nil
		})
	}
	if !gates.Enabled(gateConsumableCapacity) && !sliceUses(old, usesConsumableCapacity) {
		each(dropConsumableCapacity)
	}
	if !gates.Enabled(gateCompatibilityGroups) && !sliceUses(old, usesCompatibilityGroups) {
		each(func(d *resourcev1.Device) {
			for j := range d.ConsumesCounters {
				d.ConsumesCounters[j].CompatibilityGroups = nil
			}
		})
	}
	if !gates.Enabled(gateNodeAllocatable) && !sliceUses(old, func(d *resourcev1.Device) bool { return len(d.NodeAllocatableResources) > 0 }) {
		each(func(d *resourcev1.Device) { d.NodeAllocatableResources = nil })
	}
	if !gates.Enabled(gateListTypeAttributes) && !sliceUses(old, usesListAttributes) {
		each(dropListAttributes)
	}
	if !gates.Enabled(gatePartitionType) && (old == nil || old.PartitionTypeAttribute == nil) {
		s.PartitionTypeAttribute = nil
	}
	if !gates.Enabled(gateOptionalNodeOperations) && (old == nil || len(old.SkipNodeOperations) == 0) {
		s.SkipNodeOperations = nil
	}
}

func sliceUses(s *resourcev1.ResourceSliceSpec, uses func(*resourcev1.Device) bool) bool {
	if s == nil {
		return false
	}
	for i := range s.Devices {
		if uses(&s.Devices[i]) {
			return true
		}
	}
	return false
}

// slicePartitions: shared counters, per-device node selection, or a device
// consuming counters or selecting its nodes.
func slicePartitions(s *resourcev1.ResourceSliceSpec) bool {
	if s != nil && (len(s.SharedCounters) > 0 || s.PerDeviceNodeSelection != nil) {
		return true
	}
	return sliceUses(s, func(d *resourcev1.Device) bool {
		return len(d.ConsumesCounters) > 0 || d.NodeName != nil || d.NodeSelector != nil || d.AllNodes != nil
	})
}

func usesConsumableCapacity(d *resourcev1.Device) bool {
	if d.AllowMultipleAllocations != nil {
		return true
	}
	for _, c := range d.Capacity {
		if c.RequestPolicy != nil {
			return true
		}
	}
	return false
}

func dropConsumableCapacity(d *resourcev1.Device) {
	d.AllowMultipleAllocations = nil
	for k, c := range d.Capacity {
		c.RequestPolicy = nil
		d.Capacity[k] = c
	}
}

func usesCompatibilityGroups(d *resourcev1.Device) bool {
	for _, c := range d.ConsumesCounters {
		if len(c.CompatibilityGroups) > 0 {
			return true
		}
	}
	return false
}

func usesListAttributes(d *resourcev1.Device) bool {
	for _, a := range d.Attributes {
		if a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil {
			return true
		}
	}
	return false
}

func dropListAttributes(d *resourcev1.Device) {
	for k, a := range d.Attributes {
		if a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil {
			a.BoolValues, a.IntValues, a.StringValues, a.VersionValues = nil, nil, nil, nil
			d.Attributes[k] = a
		}
	}
}

// dropDisabledClaimStatusFields clears the status fields of disabled gates
// that the stored claim does not use, as upstream's status strategy.
func dropDisabledClaimStatusFields(c, old *resourcev1.ResourceClaim, gates FeatureGates) {
	results := func(f func(*resourcev1.DeviceRequestAllocationResult)) {
		if a := c.Status.Allocation; a != nil {
			for i := range a.Devices.Results {
				f(&a.Devices.Results[i])
			}
		}
	}
	if !gates.Enabled(gateDeviceStatus) && len(old.Status.Devices) == 0 {
		c.Status.Devices = nil
	}
	if !gates.Enabled(gateDRAAdminAccess) && !claimUsesAdminAccess(old) {
		results(func(r *resourcev1.DeviceRequestAllocationResult) { r.AdminAccess = nil })
	}
	if !gates.Enabled(gateConsumableCapacity) && !claimUsesConsumableCapacity(old) {
		results(func(r *resourcev1.DeviceRequestAllocationResult) { r.ShareID, r.ConsumedCapacity = nil, nil })
		for i := range c.Status.Devices {
			c.Status.Devices[i].ShareID = nil
		}
	}
	if !gates.Enabled(gateBindingConditions) && !oldResultUses(old, func(r *resourcev1.DeviceRequestAllocationResult) bool {
		return r.BindingConditions != nil || r.BindingFailureConditions != nil
	}) {
		results(func(r *resourcev1.DeviceRequestAllocationResult) {
			r.BindingConditions, r.BindingFailureConditions = nil, nil
		})
	}
	if !gates.Enabled(gateOptionalNodeOperations) && !oldResultUses(old, func(r *resourcev1.DeviceRequestAllocationResult) bool {
		return len(r.SkipNodeOperations) > 0
	}) {
		results(func(r *resourcev1.DeviceRequestAllocationResult) { r.SkipNodeOperations = nil })
	}
}

func oldResultUses(c *resourcev1.ResourceClaim, uses func(*resourcev1.DeviceRequestAllocationResult) bool) bool {
	if a := c.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			if uses(&a.Devices.Results[i]) {
				return true
			}
		}
	}
	return false
}

func claimUsesAdminAccess(c *resourcev1.ResourceClaim) bool {
	return claimUsesSub(&c.Spec, func(e *resourcev1.ExactDeviceRequest) bool { return e.AdminAccess != nil }, nil) ||
		oldResultUses(c, func(r *resourcev1.DeviceRequestAllocationResult) bool { return r.AdminAccess != nil })
}

func claimUsesConsumableCapacity(c *resourcev1.ResourceClaim) bool {
	if claimUsesCapacity(&c.Spec) || oldResultUses(c, func(r *resourcev1.DeviceRequestAllocationResult) bool {
		return r.ShareID != nil || r.ConsumedCapacity != nil
	}) {
		return true
	}
	for _, d := range c.Status.Devices {
		if d.ShareID != nil {
			return true
		}
	}
	return false
}

// sharedDevice identifies an allocated device (and its share); an error
// shows it as JSON with these field names, as upstream's SharedDeviceID.
type sharedDevice struct{ Driver, Pool, Device, ShareID string }

func resultDevice(r *resourcev1.DeviceRequestAllocationResult) sharedDevice {
	d := sharedDevice{Driver: r.Driver, Pool: r.Pool, Device: r.Device}
	if r.ShareID != nil {
		d.ShareID = string(*r.ShareID)
	}
	return d
}

func statusDevice(s *resourcev1.AllocatedDeviceStatus) sharedDevice {
	d := sharedDevice{Driver: s.Driver, Pool: s.Pool, Device: s.Device}
	if s.ShareID != nil {
		d.ShareID = *s.ShareID
	}
	return d
}

// allocatedDevices are the devices of an allocation.
func allocatedDevices(a *resourcev1.AllocationResult) map[sharedDevice]bool {
	out := map[sharedDevice]bool{}
	if a != nil {
		for i := range a.Devices.Results {
			out[resultDevice(&a.Devices.Results[i])] = true
		}
	}
	return out
}

// dropDeallocatedDeviceStatuses removes the statuses of devices the stored
// claim had allocated and the new one has not.
func dropDeallocatedDeviceStatuses(c, old *resourcev1.ResourceClaim, gates FeatureGates) {
	if !gates.Enabled(gateDeviceStatus) && len(old.Status.Devices) == 0 {
		return
	}
	gone := allocatedDevices(old.Status.Allocation)
	for d := range allocatedDevices(c.Status.Allocation) {
		delete(gone, d)
	}
	kept := c.Status.Devices[:0]
	for _, d := range c.Status.Devices {
		if !gone[statusDevice(&d)] {
			kept = append(kept, d)
		}
	}
	c.Status.Devices = kept
	if len(c.Status.Devices) == 0 {
		c.Status.Devices = nil
	}
}
