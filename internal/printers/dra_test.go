package printers

import (
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestResourceClaimTable mirrors upstream's printResourceClaim: the state
// joins deleted, pending or allocated and reserved.
func TestResourceClaimTable(t *testing.T) {
	res := lookup(t, "resource.k8s.io", "v1", "resourceclaims")
	deleting := objMeta("claim-3")
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	allocated := resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{},
		ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "u"}}}
	checkKind(t, res, []string{"Name", "State", "Age"}, []cellCase{
		{name: "pending", obj: &resourcev1.ResourceClaim{ObjectMeta: objMeta("claim-1")}, cells: []any{"claim-1", "pending", "5m"}},
		{name: "allocated and reserved", obj: &resourcev1.ResourceClaim{ObjectMeta: objMeta("claim-2"), Status: allocated},
			cells: []any{"claim-2", "allocated,reserved", "5m"}},
		{name: "deleted", obj: &resourcev1.ResourceClaim{ObjectMeta: deleting}, cells: []any{"claim-3", "deleted", "5m"}},
		{name: "deleted, allocated", obj: &resourcev1.ResourceClaim{ObjectMeta: deleting, Status: resourcev1.ResourceClaimStatus{
			Allocation: &resourcev1.AllocationResult{}}}, cells: []any{"claim-3", "deleted,allocated", "5m"}},
	})
}

func TestResourceSliceTable(t *testing.T) {
	res := lookup(t, "resource.k8s.io", "v1", "resourceslices")
	spec := resourcev1.ResourceSliceSpec{Driver: "gpu.example.com", NodeName: ptr.To("node-1"), Pool: resourcev1.ResourcePool{Name: "pool-1"}}
	checkKind(t, res, []string{"Name", "Node", "Driver", "Pool", "Age"}, []cellCase{
		{name: "node", obj: &resourcev1.ResourceSlice{ObjectMeta: clusterMeta("s1"), Spec: spec}, cells: []any{"s1", "node-1", "gpu.example.com", "pool-1", "5m"}},
		{name: "all nodes", obj: &resourcev1.ResourceSlice{ObjectMeta: clusterMeta("s2"), Spec: resourcev1.ResourceSliceSpec{AllNodes: ptr.To(true)}},
			cells: []any{"s2", "", "", "", "5m"}},
	})
}

func TestDeviceTaintRuleTable(t *testing.T) {
	res := lookup(t, "resource.k8s.io", "v1", "devicetaintrules")
	taint := resourcev1.DeviceTaint{Key: "example.com/broken", Value: "true", Effect: resourcev1.DeviceTaintEffectNoExecute,
		TimeAdded: &metav1.Time{Time: now.Add(-2 * time.Hour)}}
	checkKind(t, res, []string{"Name", "Key", "Value", "Effect", "TimeAdded", "Age"}, []cellCase{
		{name: "taint", obj: &resourcev1.DeviceTaintRule{ObjectMeta: clusterMeta("r1"), Spec: resourcev1.DeviceTaintRuleSpec{Taint: taint}},
			cells: []any{"r1", "example.com/broken", "true", "NoExecute", "120m", "5m"}},
		{name: "no time", obj: &resourcev1.DeviceTaintRule{ObjectMeta: clusterMeta("r2")}, cells: []any{"r2", "", "", "", "", "5m"}},
	})
}

func TestDeviceClassAndTemplateTables(t *testing.T) {
	checkKind(t, lookup(t, "resource.k8s.io", "v1", "deviceclasses"), []string{"Name", "Age"}, []cellCase{
		{name: "class", obj: &resourcev1.DeviceClass{ObjectMeta: clusterMeta("gpu")}, cells: []any{"gpu", "5m"}}})
	checkKind(t, lookup(t, "resource.k8s.io", "v1", "resourceclaimtemplates"), []string{"Name", "Age"}, []cellCase{
		{name: "template", obj: &resourcev1.ResourceClaimTemplate{ObjectMeta: objMeta("t")}, cells: []any{"t", "5m"}}})
}
