package quota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestResourceClaimUsage: one claim, each class's devices (an exact
// request's count, all devices as the most an allocation holds, the most
// of a request's alternatives) and as many of its implicit extended
// resource; no devices of an unknown mode.
func TestResourceClaimUsage(t *testing.T) {
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}, Spec: resourcev1.ResourceClaimSpec{
		Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
			{Name: "a", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: "ExactCount", Count: 2}},
			{Name: "b", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: "All"}},
			{Name: "c", FirstAvailable: []resourcev1.DeviceSubRequest{{Name: "x", DeviceClassName: "nic", AllocationMode: "ExactCount", Count: 3},
				{Name: "y", DeviceClassName: "nic", AllocationMode: "ExactCount", Count: 1}, {Name: "z", DeviceClassName: "fpga", AllocationMode: "Other"}}},
		}}}}
	got, err := NewResourceClaims().Usage(claim)
	want := corev1.ResourceList{
		"count/resourceclaims.resource.k8s.io":            resource.MustParse("1"),
		"gpu.deviceclass.resource.k8s.io/devices":         resource.MustParse("34"),
		"nic.deviceclass.resource.k8s.io/devices":         resource.MustParse("3"),
		"requests.deviceclass.resource.kubernetes.io/gpu": resource.MustParse("34"),
		"requests.deviceclass.resource.kubernetes.io/nic": resource.MustParse("3"),
	}
	if err != nil || !Equal(got, want) {
		t.Errorf("Usage = %s, %v; want %s", FormatList(got), err, FormatList(want))
	}
	e := NewResourceClaims()
	names := []corev1.ResourceName{"count/resourceclaims.resource.k8s.io", "gpu.deviceclass.resource.k8s.io/devices",
		"requests.deviceclass.resource.kubernetes.io/gpu", "pods"}
	if m := e.MatchingResources(names); len(m) != 2 {
		t.Errorf("MatchingResources(%v) = %v, want the count and the devices", names, m)
	}
}
