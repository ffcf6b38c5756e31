package registry

import (
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func draClaim() *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", ResourceVersion: "1"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
			{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu"}}}}}}
}

func allocation(node string, devices ...string) *resourcev1.AllocationResult {
	a := &resourcev1.AllocationResult{NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}
	for _, d := range devices {
		a.Devices.Results = append(a.Devices.Results, resourcev1.DeviceRequestAllocationResult{Request: "gpu", Driver: "gpu.example.com", Pool: node, Device: d})
	}
	return a
}

// TestResourceClaimWrites: defaults, an empty status on create, the spec
// kept by a status write, device statuses dropped with their devices, and
// the checks a status write needs.
func TestResourceClaimWrites(t *testing.T) {
	c := draClaim()
	c.Status.Allocation = allocation("n1", "d0")
	if errs := createErrors(t, c); len(errs) > 0 || c.Status.Allocation != nil || c.Spec.Devices.Requests[0].Exactly.Count != 1 {
		t.Fatalf("create: %v, %+v; want valid, count 1, no status", errs, c)
	}
	r := resourceFor(t, c)
	st := c.DeepCopy()
	st.Spec.Devices.Requests[0].Name = "changed"
	st.Status.Allocation = allocation("n1", "d0", "d1")
	st.Status.Devices = []resourcev1.AllocatedDeviceStatus{{Driver: "gpu.example.com", Pool: "n1", Device: "d1"}}
	out := PrepareForUpdate(r, "status", st, c).(*resourcev1.ResourceClaim)
	if errs := r.ValidateSubresourceChange("status", out, c); len(errs) > 0 || out.Spec.Devices.Requests[0].Name != "gpu" {
		t.Fatalf("status write: %v, spec %+v; want valid, the stored spec", errs, out.Spec)
	}
	checks := r.ChecksFor("status", out, c)
	if len(checks) != 2 || checks[0].Access.Subresource != "binding" || checks[1].Access.Name != "gpu.example.com" {
		t.Errorf("status checks = %+v, want binding then driver gpu.example.com", checks)
	}
	dealloc := out.DeepCopy()
	dealloc.Status.Allocation = allocation("n1", "d0")
	if got := PrepareForUpdate(r, "status", dealloc, out).(*resourcev1.ResourceClaim); got.Status.Devices != nil {
		t.Errorf("device statuses after deallocating d1 = %+v, want none", got.Status.Devices)
	}
	admin := draClaim()
	admin.Spec.Devices.Requests[0].Exactly.AdminAccess = ptr.To(true)
	if checks := r.ChecksFor("", admin, nil); len(checks) != 1 || checks[0].Label != adminAccessLabel ||
		checks[0].Field.String() != "spec.devices.requests[0].adminAccess" {
		t.Errorf("admin access checks = %+v, want the namespace label on requests[0]", checks)
	}
}

// TestDRAGenerationsAndDrops: classes, slices and taint rules count
// generations; a slice loses fields of gates off by default.
func TestDRAGenerationsAndDrops(t *testing.T) {
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu", ResourceVersion: "1"}}
	if errs := createErrors(t, class); len(errs) > 0 || class.Generation != 1 {
		t.Fatalf("class create: %v, generation %d", errs, class.Generation)
	}
	changed := class.DeepCopy()
	changed.Spec.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: "true"}}}
	if errs := PrepareUpdate(resourceFor(t, class), changed, class); len(errs) > 0 || changed.Generation != 2 {
		t.Errorf("class update: %v, generation %d; want 2", errs, changed.Generation)
	}
	slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1.ResourceSliceSpec{Driver: "GPU.example.com",
		AllNodes: ptr.To(true), Pool: resourcev1.ResourcePool{Name: "p", ResourceSliceCount: 1}, PartitionTypeAttribute: ptr.To[resourcev1.FullyQualifiedName]("a/b"),
		SkipNodeOperations: []resourcev1.SkipNodeOperation{resourcev1.SkipNodeOperationAll}}}
	if errs := createErrors(t, slice); len(errs) > 0 || slice.Spec.PartitionTypeAttribute != nil || slice.Spec.SkipNodeOperations != nil {
		t.Errorf("slice create: %v, %+v; want valid, without the partition type and skipped operations", errs, slice.Spec)
	}
	want := `spec.driver: driver names should be lowercase; "GPU.example.com" contains uppercase characters`
	if w := resourceFor(t, slice).Warnings(slice, nil); len(w) != 1 || w[0] != want {
		t.Errorf("warnings = %q, want %q", w, want)
	}
}

// TestDeviceTaintRuleWrites: a new effect restarts the taint's time; a
// status write keeps the spec; updates need a resourceVersion.
func TestDeviceTaintRuleWrites(t *testing.T) {
	defer func(f func() time.Time) { now = f }(now)
	at := time.Date(2026, 5, 1, 10, 0, 0, 500, time.UTC)
	now = func() time.Time { return at }
	rule := &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "r", ResourceVersion: "1"},
		Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "k", Effect: resourcev1.DeviceTaintEffectNoSchedule}}}
	if errs := createErrors(t, rule); len(errs) > 0 || !rule.Spec.Taint.TimeAdded.Equal(&metav1.Time{Time: at.Truncate(time.Second)}) {
		t.Fatalf("create: %v, %+v", errs, rule.Spec.Taint)
	}
	r := resourceFor(t, rule)
	if !r.Strategy.RequireResourceVersion {
		t.Error("devicetaintrules take unconditional updates, want a resourceVersion required")
	}
	at = at.Add(time.Hour)
	evict := rule.DeepCopy()
	evict.Spec.Taint.Effect = resourcev1.DeviceTaintEffectNoExecute
	if errs := PrepareUpdate(r, evict, rule); len(errs) > 0 || !evict.Spec.Taint.TimeAdded.Time.Equal(at.Truncate(time.Second)) || evict.Generation != 2 {
		t.Errorf("effect change: %v, %+v, generation %d; want the time restarted, generation 2", errs, evict.Spec.Taint, evict.Generation)
	}
	bad := rule.DeepCopy()
	bad.Spec.Taint.Effect = "Foo"
	if got := aggregate(PrepareUpdate(r, bad, rule)); !strings.Contains(got, `spec.taint.effect: Unsupported value: "Foo"`) {
		t.Errorf("bad effect: %s", got)
	}
}

// TestDriverAccessVerbs: a service account of a pod on the claim's node
// may hold associated-node:<verb>; anyone else needs arbitrary-node:<verb>.
func TestDriverAccessVerbs(t *testing.T) {
	a := driverAccess("ns", "gpu.example.com", "n1")
	onN1 := authenticationv1.UserInfo{Username: "system:serviceaccount:ns:driver", Extra: map[string]authenticationv1.ExtraValue{serviceAccountNodeKey: {"n1"}}}
	for _, tc := range []struct {
		user authenticationv1.UserInfo
		want []string
	}{
		{onN1, []string{"associated-node:update", "arbitrary-node:update"}},
		{authenticationv1.UserInfo{Username: onN1.Username, Extra: map[string]authenticationv1.ExtraValue{serviceAccountNodeKey: {"n2"}}}, []string{"arbitrary-node:update"}},
		{authenticationv1.UserInfo{Username: "system:serviceaccount:ns:a:b", Extra: onN1.Extra}, []string{"arbitrary-node:update"}},
		{authenticationv1.UserInfo{Username: "system:node:n1", Extra: onN1.Extra}, []string{"arbitrary-node:update"}},
	} {
		if got := a.Verbs(tc.user, "update"); !slices.Equal(got, tc.want) {
			t.Errorf("Verbs(%s on %v) = %v, want %v", tc.user.Username, tc.user.Extra, got, tc.want)
		}
	}
}
