package registry

import (
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of a claim's status and of a taint rule's spec and status, as
// upstream's pkg/apis/resource/validation.

// validateClaimStatusUpdate: distinct reservations (at most 256), device
// statuses of allocated devices, reservations only on an allocated claim
// (and none new on a claim being deleted), and a new allocation checked in
// full while a stored one may not change.
func validateClaimStatusUpdate(c, was *resourcev1.ResourceClaim) field.ErrorList {
	s, old, p := &c.Status, &was.Status, statusFld
	names := claimRequestNames(&c.Spec.Devices)
	errs := eachUnique(s.ReservedFor, resourcev1.ResourceClaimReservedForMaxSize, p.Child("reservedFor"), sizeCovered|uniqueCovered,
		consumerReference, func(r resourcev1.ResourceClaimConsumerReference) types.UID { return r.UID })
	allocated := allocatedDevices(s.Allocation)
	errs = append(errs, eachUnique(s.Devices, -1, p.Child("devices"), uniqueCovered,
		func(d resourcev1.AllocatedDeviceStatus, p *field.Path) field.ErrorList {
			return deviceStatus(d, p, allocated)
		},
		func(d resourcev1.AllocatedDeviceStatus) sharedDevice { return statusDevice(&d) })...)
	if len(s.ReservedFor) > 0 {
		switch {
		case s.Allocation == nil:
			errs = append(errs, field.Forbidden(p.Child("reservedFor"), "may not be specified when `allocated` is not set"))
		case c.DeletionTimestamp != nil && addsReservations(s.ReservedFor, old.ReservedFor):
			errs = append(errs, field.Forbidden(p.Child("reservedFor"), "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"))
		}
	}
	switch {
	case old.Allocation != nil && s.Allocation != nil:
		if !apiequality.Semantic.DeepEqual(s.Allocation, old.Allocation) {
			errs = append(errs, field.Invalid(p.Child("allocation"), internalJSON(s.Allocation), fieldImmutable).
				WithOrigin("update").MarkCoveredByDeclarative())
		}
	case s.Allocation != nil:
		errs = append(errs, allocationResult(s.Allocation, p.Child("allocation"), names)...)
	}
	return errs
}

func addsReservations(refs, old []resourcev1.ResourceClaimConsumerReference) bool {
	had := map[resourcev1.ResourceClaimConsumerReference]bool{}
	for _, r := range old {
		had[r] = true
	}
	for _, r := range refs {
		if !had[r] {
			return true
		}
	}
	return false
}

func consumerReference(r resourcev1.ResourceClaimConsumerReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.Resource == "" {
		errs = append(errs, field.Required(p.Child("resource"), ""))
	}
	if r.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if r.UID == "" {
		errs = append(errs, field.Required(p.Child("uid"), ""))
	}
	return errs
}

func allocationResult(a *resourcev1.AllocationResult, p *field.Path, names requestNames) field.ErrorList {
	dp := p.Child("devices")
	errs := eachItem(a.Devices.Results, resourcev1.AllocationResultsMaxSize, dp.Child("results"), sizeCovered,
		func(r resourcev1.DeviceRequestAllocationResult, p *field.Path) field.ErrorList {
			return allocationResultItem(r, p, names)
		})
	errs = append(errs, eachItem(a.Devices.Config, 2*resourcev1.DeviceConfigMaxSize, dp.Child("config"), sizeCovered,
		func(c resourcev1.DeviceAllocationConfiguration, p *field.Path) field.ErrorList {
			errs := configSource(c.Source, p.Child("source"))
			errs = append(errs, requestRefs(c.Requests, p.Child("requests"), names)...)
			return append(errs, deviceConfiguration(c.DeviceConfiguration, p, false)...)
		})...)
	if a.NodeSelector != nil {
		errs = append(errs, nodeSelector(a.NodeSelector, p.Child("nodeSelector"))...)
	}
	return errs
}

func allocationResultItem(r resourcev1.DeviceRequestAllocationResult, p *field.Path, names requestNames) field.ErrorList {
	errs := requestRef(r.Request, p.Child("request"), names)
	errs = append(errs, coveredDriverName(r.Driver, p.Child("driver"))...)
	errs = append(errs, poolName(r.Pool, p.Child("pool")).MarkCoveredByDeclarative()...)
	errs = append(errs, dnsLabel(r.Device, p.Child("device"))...)
	errs = append(errs, bindingConditions(r.BindingConditions, r.BindingFailureConditions, p)...)
	errs = append(errs, tolerations(r.Tolerations, p.Child("tolerations"))...)
	if r.ShareID != nil {
		errs = append(errs, uid(string(*r.ShareID), p.Child("shareID")).MarkCoveredByDeclarative()...)
	}
	return append(errs, skipNodeOperations(r.SkipNodeOperations, p.Child("skipNodeOperations"))...)
}

func configSource(s resourcev1.AllocationConfigSource, p *field.Path) field.ErrorList {
	switch s {
	case "":
		return field.ErrorList{field.Required(p, "").MarkCoveredByDeclarative()}
	case resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass:
		return nil
	}
	return field.ErrorList{field.NotSupported(p, s, []resourcev1.AllocationConfigSource{resourcev1.AllocationConfigSourceClaim,
		resourcev1.AllocationConfigSourceClass}).MarkCoveredByDeclarative()}
}

// deviceStatus: a driver, pool and device of the allocation, at most 8
// valid conditions, data as a JSON object, and network data.
func deviceStatus(d resourcev1.AllocatedDeviceStatus, p *field.Path, allocated map[sharedDevice]bool) field.ErrorList {
	errs := plainDriverName(d.Driver, p.Child("driver"))
	errs = append(errs, poolName(d.Pool, p.Child("pool"))...)
	errs = append(errs, dnsLabel(d.Device, p.Child("device"))...)
	if d.ShareID != nil {
		errs = append(errs, uid(*d.ShareID, p.Child("shareID")).MarkCoveredByDeclarative()...)
	}
	if id := statusDevice(&d); !allocated[id] {
		errs = append(errs, field.Invalid(p, id, "must be an allocated device in the claim"))
	}
	if len(d.Conditions) > resourcev1.AllocatedDeviceStatusMaxConditions {
		errs = append(errs, field.TooMany(p.Child("conditions"), len(d.Conditions), resourcev1.AllocatedDeviceStatusMaxConditions))
	}
	errs = append(errs, metav1validation.ValidateConditions(d.Conditions, p.Child("conditions"))...)
	if d.Data != nil && len(d.Data.Raw) > 0 {
		errs = append(errs, rawObject(*d.Data, p.Child("data"), false, resourcev1.AllocatedDeviceStatusDataMaxLength)...)
	}
	return append(errs, networkData(d.NetworkData, p.Child("networkData"))...)
}

func networkData(n *resourcev1.NetworkDeviceData, p *field.Path) field.ErrorList {
	if n == nil {
		return nil
	}
	var errs field.ErrorList
	if len(n.InterfaceName) > resourcev1.NetworkDeviceDataInterfaceNameMaxLength {
		errs = append(errs, field.TooLong(p.Child("interfaceName"), "", resourcev1.NetworkDeviceDataInterfaceNameMaxLength).
			WithOrigin("maxBytes").MarkCoveredByDeclarative())
	}
	if len(n.HardwareAddress) > resourcev1.NetworkDeviceDataHardwareAddressMaxLength {
		errs = append(errs, field.TooLong(p.Child("hardwareAddress"), "", resourcev1.NetworkDeviceDataHardwareAddressMaxLength).
			WithOrigin("maxBytes").MarkCoveredByDeclarative())
	}
	return append(errs, eachUnique(n.IPs, resourcev1.NetworkDeviceDataMaxIPs, p.Child("ips"), sizeCovered|uniqueCovered,
		func(ip string, p *field.Path) field.ErrorList { return validation.IsValidInterfaceAddress(p, ip) }, sameString)...)
}

// validateTaintRuleSpec: the selector's driver, pool and device names and
// the taint (its effect checked when new or changed).
func validateTaintRuleSpec(s, old *resourcev1.DeviceTaintRuleSpec) field.ErrorList {
	var errs field.ErrorList
	if sel, p := s.DeviceSelector, specPath.Child("deviceSelector"); sel != nil {
		if sel.Driver != nil {
			errs = append(errs, plainDriverName(*sel.Driver, p.Child("driver"))...)
		}
		if sel.Pool != nil {
			errs = append(errs, poolName(*sel.Pool, p.Child("pool"))...)
		}
		if sel.Device != nil {
			errs = append(errs, dnsLabel(*sel.Device, p.Child("device"))...)
		}
	}
	var oldTaint *resourcev1.DeviceTaint
	if old != nil {
		oldTaint = &old.Taint
	}
	return append(errs, deviceTaint(s.Taint, oldTaint, specPath.Child("taint"))...)
}

func validateTaintRuleStatus(s *resourcev1.DeviceTaintRuleStatus) field.ErrorList {
	p := statusFld.Child("conditions")
	errs := metav1validation.ValidateConditions(s.Conditions, p)
	if len(s.Conditions) > resourcev1.DeviceTaintRuleStatusMaxConditions {
		errs = append(errs, field.TooMany(p, len(s.Conditions), resourcev1.DeviceTaintRuleStatusMaxConditions))
	}
	return errs
}
