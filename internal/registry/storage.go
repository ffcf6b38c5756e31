package registry

import (
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The kinds of storage.k8s.io/v1, as kube-apiserver 1.37 serves them
// (pkg/registry/storage), in the order discovery lists them (upstream sorts
// a version's resources by name). None has short names or categories but
// StorageClass ("sc") and VolumeAttributesClass ("vac"). VolumeAttachment
// (storage_attachment.go) and VolumeAttributesClass (storage_vac.go) are
// cluster-scoped; attachments have a status subresource.
//
// CSIDriver is cluster-scoped, without status; its generation is what the
// create sent and grows by one on every change of spec. CSINode is
// cluster-scoped with a status subresource (storage health, a
// CSIVolumeHealth alpha field): a create starts from an empty status, a
// write of the main resource keeps the stored one, and a status write keeps
// the stored spec and the metadata a status strategy resets.
// CSIStorageCapacity is namespaced and has no rules beyond validation.
//
// The main strategies read feature gates at their 1.37 defaults: every gate
// CSIDriver's fields depend on is on (SELinuxMountReadWriteOncePod,
// MutableCSINodeAllocatableCount and CSIServiceAccountTokenSecrets locked,
// VolumeLimitScaling beta), so no field of a CSIDriver is dropped. The
// CSINode status strategy reads the server's gates (CSIVolumeHealth).
//
// Defaults and preparation are here, validation in storage_validate.go
// (upstream's pkg/apis/storage/validation).

func storageKinds() []descriptor {
	dns := apivalidation.NameIsDNSSubdomain
	return []descriptor{
		{gv: "storage.k8s.io/v1", resource: "csidrivers", kind: "CSIDriver", name: dns, strategy: csiDriverStrategy()},
		{gv: "storage.k8s.io/v1", resource: "csinodes", kind: "CSINode", name: dns, status: statusReset, strategy: csiNodeStrategy()},
		{gv: "storage.k8s.io/v1", resource: "csistoragecapacities", kind: "CSIStorageCapacity", namespaced: true, name: dns,
			strategy: csiStorageCapacityStrategy()},
		{gv: "storage.k8s.io/v1", resource: "storageclasses", kind: "StorageClass", short: []string{"sc"}, name: dns,
			strategy: Strategy{Default: defaultStorageClass, Validate: validateStorageClass, ValidateUpdate: validateStorageClassUpdate, Warnings: storageClassWarnings}},
		{gv: "storage.k8s.io/v1", resource: "volumeattachments", kind: "VolumeAttachment", name: dns, status: statusReset,
			strategy: volumeAttachmentStrategy()},
		{gv: "storage.k8s.io/v1", resource: "volumeattributesclasses", kind: "VolumeAttributesClass", short: []string{"vac"}, name: dns,
			strategy: volumeAttributesClassStrategy()},
	}
}

// storageGates are the gates the storage kinds' main strategies read.
var storageGates FeatureGates = defaultGates{}

// The feature gates the storage kinds read.
const (
	gateSELinuxMount       = "SELinuxMountReadWriteOncePod"
	gateMutableAllocatable = "MutableCSINodeAllocatableCount"
	gateTokenSecrets       = "CSIServiceAccountTokenSecrets"
	gateVolumeLimitScaling = "VolumeLimitScaling"
	gateCSIVolumeHealth    = "CSIVolumeHealth"
)

// tokenInSecretsRecommend is the warning of a CSIDriver that requests
// tokens without saying whether they go in secrets.
const tokenInSecretsRecommend = "spec.serviceAccountTokenInSecrets is unset; if supported by this CSI driver, " +
	"set to true to prevent possible logging of tokens in volume attributes"

func csiDriverStrategy() Strategy {
	return Strategy{
		Default: func(obj runtime.Object) { defaultCSIDriver(obj.(*storagev1.CSIDriver), storageGates) },
		PrepareForCreate: func(obj runtime.Object) {
			dropDisabledCSIDriverFields(&obj.(*storagev1.CSIDriver).Spec, nil, storageGates)
		},
		PrepareForUpdate: func(obj, old runtime.Object) {
			d, was := obj.(*storagev1.CSIDriver), old.(*storagev1.CSIDriver)
			dropDisabledCSIDriverFields(&d.Spec, &was.Spec, storageGates)
			if !apiequality.Semantic.DeepEqual(d.Spec, was.Spec) {
				d.Generation = was.Generation + 1
			}
		},
		Validate: func(obj runtime.Object) field.ErrorList {
			return uniqueMessages(validateCSIDriverSpec(&obj.(*storagev1.CSIDriver).Spec, storageGates))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			return uniqueMessages(validateCSIDriverUpdate(obj.(*storagev1.CSIDriver), old.(*storagev1.CSIDriver), storageGates))
		},
		Warnings: func(obj, old runtime.Object) []string {
			d := obj.(*storagev1.CSIDriver)
			var before []storagev1.TokenRequest
			if old != nil {
				before = old.(*storagev1.CSIDriver).Spec.TokenRequests
			}
			return csiDriverWarnings(&d.Spec, before, old != nil, storageGates)
		},
	}
}

// defaultCSIDriver fills a CSIDriver's spec as v1 decoding does: attach
// required, no pod info, no capacity tracking, fsGroup for RWO volumes with
// a filesystem type, persistent volumes, no republish, and (with their
// gates) no SELinux mounts and scheduling not blocked.
func defaultCSIDriver(d *storagev1.CSIDriver, gates FeatureGates) {
	s := &d.Spec
	setBool(&s.AttachRequired, true)
	setBool(&s.PodInfoOnMount, false)
	setBool(&s.StorageCapacity, false)
	if s.FSGroupPolicy == nil {
		p := storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy
		s.FSGroupPolicy = &p
	}
	if len(s.VolumeLifecycleModes) == 0 {
		s.VolumeLifecycleModes = append(s.VolumeLifecycleModes, storagev1.VolumeLifecyclePersistent)
	}
	setBool(&s.RequiresRepublish, false)
	if gates.Enabled(gateSELinuxMount) {
		setBool(&s.SELinuxMount, false)
	}
	if gates.Enabled(gateVolumeLimitScaling) {
		setBool(&s.PreventPodSchedulingIfMissing, false)
	}
}

func setBool(p **bool, v bool) {
	if *p == nil {
		*p = &v
	}
}

// dropDisabledCSIDriverFields clears the fields whose gates are off, unless
// the stored spec (nil on create) already has them.
func dropDisabledCSIDriverFields(s, old *storagev1.CSIDriverSpec, gates FeatureGates) {
	if !gates.Enabled(gateSELinuxMount) && (old == nil || old.SELinuxMount == nil) {
		s.SELinuxMount = nil
	}
	if !gates.Enabled(gateMutableAllocatable) && (old == nil || old.NodeAllocatableUpdatePeriodSeconds == nil) {
		s.NodeAllocatableUpdatePeriodSeconds = nil
	}
	if !gates.Enabled(gateTokenSecrets) && (old == nil || old.ServiceAccountTokenInSecrets == nil) {
		s.ServiceAccountTokenInSecrets = nil
	}
	if !gates.Enabled(gateVolumeLimitScaling) && (old == nil || old.PreventPodSchedulingIfMissing == nil) {
		s.PreventPodSchedulingIfMissing = nil
	}
}

// csiDriverWarnings recommends serviceAccountTokenInSecrets to a driver
// that requests tokens without saying where they go: on create, and on an
// update that changes the token requests.
func csiDriverWarnings(s *storagev1.CSIDriverSpec, oldRequests []storagev1.TokenRequest, update bool, gates FeatureGates) []string {
	if !gates.Enabled(gateTokenSecrets) || len(s.TokenRequests) == 0 || s.ServiceAccountTokenInSecrets != nil {
		return nil
	}
	if update && apiequality.Semantic.DeepEqual(oldRequests, s.TokenRequests) {
		return nil
	}
	return []string{tokenInSecretsRecommend}
}

func csiNodeStrategy() Strategy {
	return Strategy{
		Validate: func(obj runtime.Object) field.ErrorList {
			return uniqueMessages(validateCSINodeSpec(&obj.(*storagev1.CSINode).Spec))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			return uniqueMessages(validateCSINodeUpdate(obj.(*storagev1.CSINode), old.(*storagev1.CSINode), storageGates))
		},
		Subresources: map[string]SubresourceStrategy{"status": {
			PrepareForUpdate: func(obj, old runtime.Object, gates FeatureGates) {
				n, was := obj.(*storagev1.CSINode), old.(*storagev1.CSINode)
				n.Spec = *was.Spec.DeepCopy()
				metav1.ResetObjectMetaForStatus(&n.ObjectMeta, &was.ObjectMeta)
				if !gates.Enabled(gateCSIVolumeHealth) && len(was.Status.StorageHealth) == 0 {
					n.Status.StorageHealth = nil
				}
			},
			ValidateUpdate: func(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
				errs := ValidateObjectMetaUpdate(obj, old)
				return uniqueMessages(append(errs, validateCSINodeStatus(obj.(*storagev1.CSINode).Status)...))
			},
		}},
	}
}

func csiStorageCapacityStrategy() Strategy {
	return Strategy{
		Validate: func(obj runtime.Object) field.ErrorList {
			return uniqueMessages(validateCSIStorageCapacity(obj.(*storagev1.CSIStorageCapacity), false))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			return uniqueMessages(validateCSIStorageCapacityUpdate(obj.(*storagev1.CSIStorageCapacity), old.(*storagev1.CSIStorageCapacity)))
		},
		Warnings: func(obj, _ runtime.Object) []string {
			return nodeTopologyWarnings(obj.(*storagev1.CSIStorageCapacity).NodeTopology)
		},
	}
}
