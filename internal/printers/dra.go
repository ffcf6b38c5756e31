package printers

import (
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The tables of the resource.k8s.io kinds, as upstream's printDeviceClass,
// printResourceClaim, printResourceClaimTemplate, printResourceSlice and
// printDeviceTaint.

var deviceClassPrinter = kind([]metav1.TableColumnDefinition{nameColumn, ageColumn},
	func(c *resourcev1.DeviceClass, now time.Time) []any {
		return []any{c.Name, since(c.CreationTimestamp, now)}
	})

var resourceClaimPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("State", "A summary of the current state (allocated, pending, reserved, etc.)."),
	ageColumn,
}, func(c *resourcev1.ResourceClaim, now time.Time) []any {
	return []any{c.Name, claimState(c), since(c.CreationTimestamp, now)}
})

// claimState: deleted, then pending (unless deleted) or allocated (and
// reserved), joined by commas.
func claimState(c *resourcev1.ResourceClaim) string {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	switch {
	case c.Status.Allocation != nil:
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	case c.DeletionTimestamp == nil:
		states = append(states, "pending")
	}
	return strings.Join(states, ",")
}

var resourceClaimTemplatePrinter = kind([]metav1.TableColumnDefinition{nameColumn, ageColumn},
	func(t *resourcev1.ResourceClaimTemplate, now time.Time) []any {
		return []any{t.Name, since(t.CreationTimestamp, now)}
	})

var sliceSpecDoc = resourcev1.ResourceSliceSpec{}.SwaggerDoc()

var resourceSlicePrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Node", sliceSpecDoc["nodeName"]),
	str("Driver", sliceSpecDoc["driver"]),
	str("Pool", resourcev1.ResourcePool{}.SwaggerDoc()["name"]),
	ageColumn,
}, func(s *resourcev1.ResourceSlice, now time.Time) []any {
	return []any{s.Name, deref(s.Spec.NodeName), s.Spec.Driver, s.Spec.Pool.Name, since(s.CreationTimestamp, now)}
})

var taintDoc = resourcev1.DeviceTaint{}.SwaggerDoc()

var deviceTaintRulePrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Key", taintDoc["key"]),
	str("Value", taintDoc["value"]),
	str("Effect", taintDoc["effect"]),
	str("TimeAdded", taintDoc["timeAdded"]),
	ageColumn,
}, func(r *resourcev1.DeviceTaintRule, now time.Time) []any {
	t := &r.Spec.Taint
	added := ""
	if t.TimeAdded != nil {
		added = since(*t.TimeAdded, now)
	}
	return []any{r.Name, t.Key, t.Value, string(t.Effect), added, since(r.CreationTimestamp, now)}
})
