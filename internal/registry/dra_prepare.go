package registry

import (
	"fmt"
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Decoding defaults and the drops of disabled fields of the
// resource.k8s.io kinds (upstream's pkg/apis/resource/v1 defaults, the
// strategies' dropDisabled* and pkg/api/resourceclaimspec).

// The feature gates the resource.k8s.io strategies read.
const (
	gateDRAAdminAccess         = "DRAAdminAccess"
	gateConsumableCapacity     = "DRAConsumableCapacity"
	gateDerivedAttributes      = "DRADerivedAttributes"
	gateBindingConditions      = "DRADeviceBindingConditions"
	gateCompatibilityGroups    = "DRADeviceCompatibilityGroups"
	gateDeviceTaints           = "DRADeviceTaints"
	gateExtendedResource       = "DRAExtendedResource"
	gateFractionalCapacity     = "DRAFractionalCapacityRange"
	gateListTypeAttributes     = "DRAListTypeAttributes"
	gateNodeAllocatable        = "DRANodeAllocatableResources"
	gateOptionalNodeOperations = "DRAOptionalNodeOperations"
	gatePartitionableDevices   = "DRAPartitionableDevices"
	gatePartitionType          = "DRAPartitionableDevicesType"
	gatePrioritizedList        = "DRAPrioritizedList"
	gateDeviceStatus           = "DRAResourceClaimDeviceStatus"
)

// defaultClaim fills a claim as v1 decoding does: its spec's requests and
// the tolerations of its allocation results.
func defaultClaim(c *resourcev1.ResourceClaim) {
	defaultClaimSpec(&c.Spec)
	if a := c.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			defaultTolerations(a.Devices.Results[i].Tolerations)
		}
	}
}

// defaultClaimSpec: a request (or subrequest) takes ExactCount, one device,
// unless it says otherwise; a toleration's operator is Equal.
func defaultClaimSpec(s *resourcev1.ResourceClaimSpec) {
	for i := range s.Devices.Requests {
		r := &s.Devices.Requests[i]
		if e := r.Exactly; e != nil {
			defaultCount(&e.AllocationMode, &e.Count)
			defaultTolerations(e.Tolerations)
		}
		for j := range r.FirstAvailable {
			sub := &r.FirstAvailable[j]
			defaultCount(&sub.AllocationMode, &sub.Count)
			defaultTolerations(sub.Tolerations)
		}
	}
}

func defaultCount(mode *resourcev1.DeviceAllocationMode, count *int64) {
	if *mode == "" {
		*mode = resourcev1.DeviceAllocationModeExactCount
	}
	if *mode == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
}

func defaultTolerations(ts []resourcev1.DeviceToleration) {
	for i := range ts {
		if ts[i].Operator == "" {
			ts[i].Operator = resourcev1.DeviceTolerationOpEqual
		}
	}
}

// defaultTaint: a taint without a time was added now (to the second).
func defaultTaint(t *resourcev1.DeviceTaint) {
	if t.TimeAdded == nil {
		t.TimeAdded = &metav1.Time{Time: now().Truncate(time.Second)}
	}
}

func defaultSlice(s *resourcev1.ResourceSlice) {
	for i := range s.Spec.Devices {
		for j := range s.Spec.Devices[i].Taints {
			defaultTaint(&s.Spec.Devices[i].Taints[j])
		}
	}
}

// sliceWarnings: a driver name should be lowercase.
func sliceWarnings(s *resourcev1.ResourceSlice) []string {
	if d := s.Spec.Driver; d != strings.ToLower(d) {
		return []string{fmt.Sprintf("spec.driver: driver names should be lowercase; %q contains uppercase characters", d)}
	}
	return nil
}

// dropDisabledClassFields: extendedResourceName needs DRAExtendedResource.
func dropDisabledClassFields(s, old *resourcev1.DeviceClassSpec, gates FeatureGates) {
	if !gates.Enabled(gateExtendedResource) && (old == nil || old.ExtendedResourceName == nil) {
		s.ExtendedResourceName = nil
	}
}

// dropDisabledClaimSpecFields clears the request fields of disabled
// gates that the stored spec (nil on create) does not use: firstAvailable,
// tolerations, admin access, consumable capacity and derived attributes.
func dropDisabledClaimSpecFields(s, old *resourcev1.ResourceClaimSpec, gates FeatureGates) {
	reqs := s.Devices.Requests
	if !gates.Enabled(gatePrioritizedList) && !claimUses(old, func(r *resourcev1.DeviceRequest) bool { return len(r.FirstAvailable) > 0 }) {
		for i := range reqs {
			reqs[i].FirstAvailable = nil
		}
	}
	if !gates.Enabled(gateDeviceTaints) && !claimUsesSub(old, func(e *resourcev1.ExactDeviceRequest) bool { return len(e.Tolerations) > 0 },
		func(s *resourcev1.DeviceSubRequest) bool { return len(s.Tolerations) > 0 }) {
		eachRequest(reqs, func(e *resourcev1.ExactDeviceRequest) { e.Tolerations = nil }, func(s *resourcev1.DeviceSubRequest) { s.Tolerations = nil })
	}
	if !gates.Enabled(gateDRAAdminAccess) && !claimUsesSub(old, func(e *resourcev1.ExactDeviceRequest) bool { return e.AdminAccess != nil }, nil) {
		eachRequest(reqs, func(e *resourcev1.ExactDeviceRequest) { e.AdminAccess = nil }, nil)
	}
	if !gates.Enabled(gateConsumableCapacity) && !claimUsesCapacity(old) {
		for i := range s.Devices.Constraints {
			s.Devices.Constraints[i].DistinctAttribute = nil
		}
		eachRequest(reqs, func(e *resourcev1.ExactDeviceRequest) { e.Capacity = nil }, func(s *resourcev1.DeviceSubRequest) { s.Capacity = nil })
	}
	if !gates.Enabled(gateDerivedAttributes) && !claimUsesSub(old, func(e *resourcev1.ExactDeviceRequest) bool { return len(e.DerivedAttributes) > 0 },
		func(s *resourcev1.DeviceSubRequest) bool { return len(s.DerivedAttributes) > 0 }) {
		eachRequest(reqs, func(e *resourcev1.ExactDeviceRequest) { e.DerivedAttributes = nil },
			func(s *resourcev1.DeviceSubRequest) { s.DerivedAttributes = nil })
	}
}

// eachRequest calls exact on each request's exact request and sub (when
// not nil) on each subrequest.
func eachRequest(reqs []resourcev1.DeviceRequest, exact func(*resourcev1.ExactDeviceRequest), sub func(*resourcev1.DeviceSubRequest)) {
	for i := range reqs {
		if reqs[i].Exactly != nil {
			exact(reqs[i].Exactly)
		}
		if sub == nil {
			continue
		}
		for j := range reqs[i].FirstAvailable {
			sub(&reqs[i].FirstAvailable[j])
		}
	}
}

func claimUses(s *resourcev1.ResourceClaimSpec, uses func(*resourcev1.DeviceRequest) bool) bool {
	if s == nil {
		return false
	}
	for i := range s.Devices.Requests {
		if uses(&s.Devices.Requests[i]) {
			return true
		}
	}
	return false
}

// claimUsesSub reports whether a request's exact request, or (sub not nil)
// one of its subrequests, uses a field.
func claimUsesSub(s *resourcev1.ResourceClaimSpec, exact func(*resourcev1.ExactDeviceRequest) bool, sub func(*resourcev1.DeviceSubRequest) bool) bool {
	return claimUses(s, func(r *resourcev1.DeviceRequest) bool {
		if r.Exactly != nil && exact(r.Exactly) {
			return true
		}
		for j := range r.FirstAvailable {
			if sub != nil && sub(&r.FirstAvailable[j]) {
				return true
			}
		}
		return false
	})
}

func claimUsesCapacity(s *resourcev1.ResourceClaimSpec) bool {
	if s == nil {
		return false
	}
	for _, c := range s.Devices.Constraints {
		if c.DistinctAttribute != nil {
			return true
		}
	}
	return claimUsesSub(s, func(e *resourcev1.ExactDeviceRequest) bool { return e.Capacity != nil },
		func(s *resourcev1.DeviceSubRequest) bool { return s.Capacity != nil })
}
