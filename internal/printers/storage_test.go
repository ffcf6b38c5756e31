package printers

import (
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func clusterMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, CreationTimestamp: created}
}

// TestCSIDriverTable mirrors upstream's TestPrintCSIDriver: unset booleans
// print as their defaults, token requests as their audiences.
func TestCSIDriverTable(t *testing.T) {
	res := lookup(t, "storage.k8s.io", "v1", "csidrivers")
	columns := []string{"Name", "AttachRequired", "PodInfoOnMount", "StorageCapacity", "TokenRequests", "RequiresRepublish", "Modes", "Age"}
	checkKind(t, res, columns, []cellCase{
		{name: "unset", obj: &storagev1.CSIDriver{ObjectMeta: clusterMeta("driver1")},
			cells: []any{"driver1", true, false, false, "<unset>", false, "<none>", "5m"}},
		{name: "set", obj: &storagev1.CSIDriver{ObjectMeta: clusterMeta("driver2"), Spec: storagev1.CSIDriverSpec{
			AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(true), StorageCapacity: ptr.To(true), RequiresRepublish: ptr.To(true),
			TokenRequests:        []storagev1.TokenRequest{{Audience: "a"}, {Audience: "b"}},
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral}}},
			cells: []any{"driver2", false, true, true, "a,b", true, "Persistent,Ephemeral", "5m"}},
		{name: "empty token requests", obj: &storagev1.CSIDriver{ObjectMeta: clusterMeta("driver3"),
			Spec: storagev1.CSIDriverSpec{TokenRequests: []storagev1.TokenRequest{}}},
			cells: []any{"driver3", true, false, false, "", false, "<none>", "5m"}},
	})
}

func TestCSINodeTable(t *testing.T) {
	res := lookup(t, "storage.k8s.io", "v1", "csinodes")
	checkKind(t, res, []string{"Name", "Drivers", "Age"}, []cellCase{
		{name: "none", obj: &storagev1.CSINode{ObjectMeta: clusterMeta("node1")}, cells: []any{"node1", int64(0), "5m"}},
		{name: "two", obj: &storagev1.CSINode{ObjectMeta: clusterMeta("node2"), Spec: storagev1.CSINodeSpec{
			Drivers: []storagev1.CSINodeDriver{{Name: "a"}, {Name: "b"}}}}, cells: []any{"node2", int64(2), "5m"}},
	})
}

// TestCSIStorageCapacityTable: upstream's storage serves the default
// convertor for CSIStorageCapacities, not the printer it also has.
func TestCSIStorageCapacityTable(t *testing.T) {
	res := lookup(t, "storage.k8s.io", "v1", "csistoragecapacities")
	obj := &storagev1.CSIStorageCapacity{ObjectMeta: objMeta("cap"), StorageClassName: "fast", Capacity: ptr.To(resource.MustParse("1Gi"))}
	unset := &storagev1.CSIStorageCapacity{ObjectMeta: objMeta("none"), StorageClassName: "slow"}
	checkKind(t, res, []string{"Name", "StorageClassName", "Capacity"}, []cellCase{
		{name: "capacity", obj: obj, cells: []any{"cap", "fast", "1Gi"}},
		{name: "no capacity", obj: unset, cells: []any{"none", "slow", "<unset>"}},
	})
}

func TestVolumeAttachmentTable(t *testing.T) {
	res := lookup(t, "storage.k8s.io", "v1", "volumeattachments")
	attached := &storagev1.VolumeAttachment{ObjectMeta: clusterMeta("va-1"), Spec: storagev1.VolumeAttachmentSpec{Attacher: "disk.csi.example.com",
		NodeName: "node-1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-1")}},
		Status: storagev1.VolumeAttachmentStatus{Attached: true}}
	inline := &storagev1.VolumeAttachment{ObjectMeta: clusterMeta("va-2"), Spec: storagev1.VolumeAttachmentSpec{Attacher: "a", NodeName: "n"}}
	checkKind(t, res, []string{"Name", "Attacher", "PV", "Node", "Attached", "Age"}, []cellCase{
		{name: "attached", obj: attached, cells: []any{"va-1", "disk.csi.example.com", "pv-1", "node-1", true, "5m"}},
		{name: "no volume name", obj: inline, cells: []any{"va-2", "a", "", "n", false, "5m"}},
	})
}

func TestVolumeAttributesClassTable(t *testing.T) {
	res := lookup(t, "storage.k8s.io", "v1", "volumeattributesclasses")
	checkKind(t, res, []string{"Name", "DriverName", "Age"}, []cellCase{
		{name: "class", obj: &storagev1.VolumeAttributesClass{ObjectMeta: clusterMeta("gold"), DriverName: "disk.csi.example.com"},
			cells: []any{"gold", "disk.csi.example.com", "5m"}},
	})
}
