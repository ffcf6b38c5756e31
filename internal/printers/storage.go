package printers

import (
	"strings"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The CSI tables, as upstream's printCSIDriver and printCSINode. Upstream
// also has a CSIStorageCapacity printer, but its storage serves the default
// convertor (Name, Created At), so kubectl shows that; so does admitd, by
// not listing the kind.

var csiDriverDoc = storagev1.CSIDriverSpec{}.SwaggerDoc()

var csiDriverPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	boolean("AttachRequired", csiDriverDoc["attachRequired"]),
	boolean("PodInfoOnMount", csiDriverDoc["podInfoOnMount"]),
	boolean("StorageCapacity", csiDriverDoc["storageCapacity"]),
	str("TokenRequests", csiDriverDoc["tokenRequests"]),
	boolean("RequiresRepublish", csiDriverDoc["requiresRepublish"]),
	str("Modes", csiDriverDoc["volumeLifecycleModes"]),
	ageColumn,
}, func(d *storagev1.CSIDriver, now time.Time) []any {
	s := &d.Spec
	attach := true
	if s.AttachRequired != nil {
		attach = *s.AttachRequired
	}
	modes := make([]string, len(s.VolumeLifecycleModes))
	for i, m := range s.VolumeLifecycleModes {
		modes[i] = string(m)
	}
	return []any{d.Name, attach, deref(s.PodInfoOnMount), deref(s.StorageCapacity), tokenAudiences(s.TokenRequests),
		deref(s.RequiresRepublish), orNone(strings.Join(modes, ",")), since(d.CreationTimestamp, now)}
})

// tokenAudiences lists the audiences a driver requests tokens for,
// "<unset>" when it requests none.
func tokenAudiences(requests []storagev1.TokenRequest) string {
	if requests == nil {
		return "<unset>"
	}
	audiences := make([]string, len(requests))
	for i, r := range requests {
		audiences[i] = r.Audience
	}
	return strings.Join(audiences, ",")
}

var csiNodePrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	integer("Drivers", "Drivers indicates the number of CSI drivers registered on the node"),
	ageColumn,
}, func(n *storagev1.CSINode, now time.Time) []any {
	return []any{n.Name, int64(len(n.Spec.Drivers)), since(n.CreationTimestamp, now)}
})

var vaSpecDoc = storagev1.VolumeAttachmentSpec{}.SwaggerDoc()

// The VolumeAttachment and VolumeAttributesClass tables, as upstream's
// printVolumeAttachment and printVolumeAttributesClass.
var volumeAttachmentPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Attacher", Type: "string", Format: "name", Description: vaSpecDoc["attacher"]},
	str("PV", storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]),
	str("Node", vaSpecDoc["nodeName"]),
	boolean("Attached", storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]),
	ageColumn,
}, func(va *storagev1.VolumeAttachment, now time.Time) []any {
	pv := ""
	if p := va.Spec.Source.PersistentVolumeName; p != nil {
		pv = *p
	}
	return []any{va.Name, va.Spec.Attacher, pv, va.Spec.NodeName, va.Status.Attached, since(va.CreationTimestamp, now)}
})

var volumeAttributesClassPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("DriverName", storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]),
	ageColumn,
}, func(c *storagev1.VolumeAttributesClass, now time.Time) []any {
	return []any{c.Name, c.DriverName, since(c.CreationTimestamp, now)}
})

// The CSIStorageCapacity table, as upstream's printCSIStorageCapacity:
// the StorageClass and the capacity ("<unset>" when the driver reported
// none), no Age.
var csiStorageCapacityPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("StorageClassName", storagev1.CSIStorageCapacity{}.SwaggerDoc()["storageClassName"]),
	str("Capacity", storagev1.CSIStorageCapacity{}.SwaggerDoc()["capacity"]),
}, func(c *storagev1.CSIStorageCapacity, _ time.Time) []any {
	capacity := "<unset>"
	if c.Capacity != nil {
		capacity = c.Capacity.String()
	}
	return []any{c.Name, c.StorageClassName, capacity}
})
