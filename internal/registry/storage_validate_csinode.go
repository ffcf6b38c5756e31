package registry

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of CSINode (upstream's pkg/apis/storage/validation): the
// drivers of its spec, what an update may change in them, and the storage
// health a status write reports.

// csiNodeIDMaxLength is the longest node ID a driver may report.
const csiNodeIDMaxLength = 256

var driversPath = specPath.Child("drivers")

func validateCSINodeSpec(s *storagev1.CSINodeSpec) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i := range s.Drivers {
		errs = append(errs, validateCSINodeDriver(&s.Drivers[i], names, driversPath.Index(i))...)
	}
	return errs
}

// validateCSINodeDriver checks one driver: its name, node ID and
// allocatable count, that no earlier driver has its name, and its topology
// keys (required, distinct, qualified names; reported at the driver).
func validateCSINodeDriver(d *storagev1.CSINodeDriver, names map[string]bool, path *field.Path) field.ErrorList {
	errs := validateCSIDriverName(d.Name, path.Child("name"))
	if d.NodeID == "" {
		errs = append(errs, field.Required(path.Child("nodeID"), ""))
	}
	if len(d.NodeID) > csiNodeIDMaxLength {
		errs = append(errs, field.Invalid(path.Child("nodeID"), d.NodeID, fmt.Sprintf("must be %d characters or less", csiNodeIDMaxLength)))
	}
	if a := d.Allocatable; a != nil && a.Count != nil && *a.Count < 0 {
		errs = append(errs, field.Invalid(path.Child("allocatable", "count"), int64(*a.Count), apivalidation.IsNegativeErrorMsg))
	}
	if names[d.Name] {
		errs = append(errs, field.Duplicate(path.Child("name"), d.Name))
	}
	names[d.Name] = true
	keys := map[string]bool{}
	for _, k := range d.TopologyKeys {
		if k == "" {
			errs = append(errs, field.Required(path, ""))
		}
		if keys[k] {
			errs = append(errs, field.Duplicate(path, k))
		}
		keys[k] = true
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(path, k, msg))
		}
	}
	return errs
}

// validateCSINodeUpdate checks the new spec, then that no driver present
// before and after changed (but for its allocatable count, which may change
// under MutableCSINodeAllocatableCount).
func validateCSINodeUpdate(n, old *storagev1.CSINode, gates FeatureGates) field.ErrorList {
	errs := validateCSINodeSpec(&n.Spec)
	for _, was := range old.Spec.Drivers {
		for _, now := range n.Spec.Drivers {
			if was.Name != now.Name {
				continue
			}
			if gates.Enabled(gateMutableAllocatable) {
				was.Allocatable, now.Allocatable = nil, nil
			}
			if !apiequality.Semantic.DeepEqual(now, was) {
				errs = append(errs, field.Invalid(driversPath, internalJSON(&now), fieldImmutable))
			}
		}
	}
	return errs
}

var validHealthStatuses = []storagev1.StorageHealthStatusType{storagev1.StorageDegraded, storagev1.StorageUnreachable}

var validHealthAccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany, corev1.ReadWriteMany,
	corev1.ReadWriteOnce, corev1.ReadWriteOncePod}

const maxHealthConditions = 16

// validateCSINodeStatus checks the storage health of a status write: one
// entry per driver, each with at most 16 conditions.
func validateCSINodeStatus(s storagev1.CSINodeStatus) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("status", "storageHealth")
	seen := map[string]bool{}
	for i, h := range s.StorageHealth {
		p := path.Index(i)
		if seen[h.Name] {
			errs = append(errs, field.Duplicate(p, h.Name))
		}
		seen[h.Name] = true
		errs = append(errs, validateStorageHealth(&h, p)...)
	}
	return errs
}

func validateStorageHealth(h *storagev1.StorageHealth, path *field.Path) field.ErrorList {
	errs := validateCSIDriverName(h.Name, path.Child("name"))
	if n := len(h.HealthConditions); n > maxHealthConditions {
		return append(errs, field.TooMany(path.Child("healthConditions"), n, maxHealthConditions))
	}
	for i := range h.HealthConditions {
		errs = append(errs, validateHealthCondition(&h.HealthConditions[i], path.Child("healthConditions").Index(i))...)
	}
	return errs
}

func validateHealthCondition(c *storagev1.StorageHealthCondition, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !slices.Contains(validHealthStatuses, c.Status) {
		errs = append(errs, field.NotSupported(path.Child("status"), c.Status, validHealthStatuses))
	}
	if c.Reason == "" {
		errs = append(errs, field.Required(path.Child("reason"), ""))
	} else {
		for _, msg := range metav1validation.IsValidConditionReason(c.Reason) {
			errs = append(errs, field.Invalid(path.Child("reason"), c.Reason, msg))
		}
		if len(c.Reason) > 256 {
			errs = append(errs, field.TooLong(path.Child("reason"), c.Reason, 256))
		}
	}
	if len(c.Message) > 1024 {
		errs = append(errs, field.TooLong(path.Child("message"), c.Message, 1024))
	}
	if m := c.AccessMode; m != nil && !slices.Contains(validHealthAccessModes, *m) {
		errs = append(errs, field.NotSupported(path.Child("accessMode"), *m, validHealthAccessModes))
	}
	if m := c.VolumeMode; m != nil && *m != corev1.PersistentVolumeFilesystem && *m != corev1.PersistentVolumeBlock {
		errs = append(errs, field.NotSupported(path.Child("volumeMode"), *m,
			[]corev1.PersistentVolumeMode{corev1.PersistentVolumeFilesystem, corev1.PersistentVolumeBlock}))
	}
	return errs
}
