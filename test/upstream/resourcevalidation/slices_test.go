package resourcevalidation

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// The slice scenarios of TestValidateResourceSlice,
// TestValidateResourceSliceUpdate and the device capacity tests, and the
// update and status-write scenarios of every kind.

func validSlice() *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: goodName}, Spec: resourcev1.ResourceSliceSpec{
		NodeName: ptr.To("worker"), Driver: "dra.example.com", Pool: resourcev1.ResourcePool{Name: "worker-pool", ResourceSliceCount: 1},
		Devices: []resourcev1.Device{{Name: "device-0"}, {Name: "device-1"}}}}
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func qp(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }

func attr(v resourcev1.DeviceAttribute) map[resourcev1.QualifiedName]resourcev1.DeviceAttribute {
	return map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"a": v}
}

func devices(n int, f func(i int, d *resourcev1.Device)) []resourcev1.Device {
	out := make([]resourcev1.Device, n)
	for i := range out {
		out[i].Name = fmt.Sprintf("device-%d", i)
		f(i, &out[i])
	}
	return out
}

func policyCapacity(value string, p *resourcev1.CapacityRequestPolicy) map[resourcev1.QualifiedName]resourcev1.DeviceCapacity {
	return map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: q(value), RequestPolicy: p}}
}

func sliceCases() map[string]*resourcev1.ResourceSlice {
	out := map[string]*resourcev1.ResourceSlice{}
	for name, change := range metaVariants() {
		s := validSlice()
		change(&s.ObjectMeta)
		out["meta "+name] = s
	}
	spec := func(name string, f func(*resourcev1.ResourceSliceSpec)) {
		s := validSlice()
		f(&s.Spec)
		out[name] = s
	}
	spec("bad-nodename", func(s *resourcev1.ResourceSliceSpec) { s.NodeName = ptr.To(badName) })
	spec("bad-multi-pool-name", func(s *resourcev1.ResourceSliceSpec) { s.Pool.Name = badName + "/" + goodName + "/" + badName })
	spec("good-pool-name", func(s *resourcev1.ResourceSliceSpec) { s.Pool.Name = strings.Repeat("x", resourcev1.PoolNameMaxLength) })
	spec("long-pool-name", func(s *resourcev1.ResourceSliceSpec) {
		s.Pool.Name = strings.Repeat("x", resourcev1.PoolNameMaxLength+1)
	})
	spec("bad-pool", func(s *resourcev1.ResourceSliceSpec) { s.Pool.ResourceSliceCount, s.Pool.Generation = 0, -1 })
	spec("missing-pool-name", func(s *resourcev1.ResourceSliceSpec) { s.Pool.Name = "" })
	spec("bad-empty-node-selector", func(s *resourcev1.ResourceSliceSpec) { s.NodeName, s.NodeSelector = nil, &corev1.NodeSelector{} })
	spec("bad-node-selection", func(s *resourcev1.ResourceSliceSpec) {
		s.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"worker"}}}}}}
	})
	spec("bad-node-selection-all-nodes", func(s *resourcev1.ResourceSliceSpec) {
		s.AllNodes, s.PerDeviceNodeSelection = ptr.To(true), ptr.To(true)
	})
	spec("empty-node-selection", func(s *resourcev1.ResourceSliceSpec) { s.NodeName = nil })
	spec("two-node-selector-terms", func(s *resourcev1.ResourceSliceSpec) {
		s.NodeName = nil
		s.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{}, {MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "k", Operator: corev1.NodeSelectorOpIn, Values: []string{"bad value"}}}}}}
	})
	spec("bad-drivername", func(s *resourcev1.ResourceSliceSpec) { s.Driver = badName })
	spec("upper-case-driver", func(s *resourcev1.ResourceSliceSpec) { s.Driver = "DRA.Example.com" })
	spec("both-shared-counters-and-devices", func(s *resourcev1.ResourceSliceSpec) {
		s.SharedCounters = []resourcev1.CounterSet{{Name: "set", Counters: map[string]resourcev1.Counter{"c": {Value: q("1")}}}}
	})
	spec("bad-devices", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices[1].Name = s.Devices[0].Name
		s.Devices = append(s.Devices, resourcev1.Device{Name: badName})
	})
	spec("too-many-devices", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices = devices(resourcev1.ResourceSliceMaxDevices+1, func(int, *resourcev1.Device) {})
	})
	spec("bad-attribute", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices[1].Attributes = map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"empty": {}, "two": {StringValue: ptr.To("x"), IntValue: ptr.To[int64](1)}, "version": {VersionValue: ptr.To("1.0")},
			"long":        {StringValue: ptr.To(strings.Repeat("x", resourcev1.DeviceAttributeMaxValueLength+1))},
			"longversion": {VersionValue: ptr.To("1.0.0-" + strings.Repeat("x", resourcev1.DeviceAttributeMaxValueLength))}}
	})
	spec("list-attributes-dropped", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices[0].Attributes = map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"ints": {IntValues: []int64{1}}, "empty": {BoolValues: []bool{}}}
	})
	spec("attribute-names", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices[0].Attributes = map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"cIdentifier": {BoolValue: ptr.To(true)}, "dra.example.com/cIdentifier": {BoolValue: ptr.To(true)},
			"x_y": {BoolValue: ptr.To(true)}, "-x": {BoolValue: ptr.To(true)}, "Bad_Domain/x": {BoolValue: ptr.To(true)},
			"/": {BoolValue: ptr.To(true)}, resourcev1.QualifiedName(strings.Repeat("x", 33)): {BoolValue: ptr.To(true)},
			resourcev1.QualifiedName(strings.Repeat("d", 64) + "/" + strings.Repeat("x", 33)): {BoolValue: ptr.To(true)},
			"a/b/c": {BoolValue: ptr.To(true)}}
	})
	spec("combined-attributes-capacity-length", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices[0].Attributes = map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}
		s.Devices[0].Capacity = map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{}
		for i := range resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice + 1 {
			if i%2 == 0 {
				s.Devices[0].Attributes[resourcev1.QualifiedName(fmt.Sprintf("a%d", i))] = resourcev1.DeviceAttribute{IntValue: ptr.To[int64](1)}
			} else {
				s.Devices[0].Capacity[resourcev1.QualifiedName(fmt.Sprintf("c%d", i))] = resourcev1.DeviceCapacity{Value: q("1")}
			}
		}
	})
	spec("forbidden-request-policy-on-single-allocatable", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices[0].Capacity = policyCapacity("10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("1Gi")})
	})
	policy := func(name, value string, p *resourcev1.CapacityRequestPolicy) {
		spec("policy "+name, func(s *resourcev1.ResourceSliceSpec) {
			s.Devices[0].AllowMultipleAllocations = ptr.To(true)
			s.Devices[0].Capacity = policyCapacity(value, p)
		})
	}
	rng := func(min, max, step *resource.Quantity) *resourcev1.CapacityRequestPolicyRange {
		return &resourcev1.CapacityRequestPolicyRange{Min: min, Max: max, Step: step}
	}
	policy("none", "10Gi", nil)
	policy("without-default", "10Gi", &resourcev1.CapacityRequestPolicy{})
	policy("values-without-default", "10Gi", &resourcev1.CapacityRequestPolicy{ValidValues: []resource.Quantity{q("1Gi")}})
	policy("range-without-default", "10Gi", &resourcev1.CapacityRequestPolicy{ValidRange: rng(qp("1Gi"), nil, nil)})
	policy("range-without-min", "10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("1Gi"), ValidRange: rng(nil, nil, nil)})
	policy("simple-range", "10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("1Gi"), ValidRange: rng(qp("1Gi"), nil, nil)})
	policy("range-max-step", "10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("2Gi"), ValidRange: rng(qp("1Gi"), qp("9Gi"), qp("1Gi"))})
	policy("two-options", "10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("1Gi"), ValidValues: []resource.Quantity{q("1Gi"), q("2Gi")}})
	policy("both-policies", "10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("1Gi"), ValidValues: []resource.Quantity{q("1Gi")}, ValidRange: rng(qp("1Gi"), nil, nil)})
	policy("invalid-options", "10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("3Gi"), ValidValues: []resource.Quantity{q("20Gi"), q("1Gi"), q("1Gi"), q("1024Mi")}})
	policy("fractional-values", "10", &resourcev1.CapacityRequestPolicy{Default: qp("500m"), ValidValues: []resource.Quantity{q("500m"), q("1")}})
	policy("too-many-options", "100", &resourcev1.CapacityRequestPolicy{Default: qp("1"), ValidValues: []resource.Quantity{q("1"), q("2"), q("3"),
		q("4"), q("5"), q("6"), q("7"), q("8"), q("9"), q("10"), q("11")}})
	policy("range-large", "10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("20Gi"), ValidRange: rng(qp("11Gi"), qp("1Gi"), nil)})
	policy("range-large-max", "10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("1Gi"), ValidRange: rng(qp("1Gi"), qp("11Gi"), nil)})
	policy("range-not-multiple", "10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("1.5Gi"), ValidRange: rng(qp("1Gi"), qp("9.5Gi"), qp("1Gi"))})
	policy("zero-step", "10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("1Gi"), ValidRange: rng(qp("1Gi"), nil, qp("0"))})
	policy("negative-step", "10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("1Gi"), ValidRange: rng(qp("1Gi"), nil, qp("-1"))})
	policy("large-step", "10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("1Gi"), ValidRange: rng(qp("1Gi"), nil, qp("10Gi"))})
	policy("step-2^64", "100E", &resourcev1.CapacityRequestPolicy{Default: qp("0"), ValidRange: rng(qp("0"), nil, qp("18446744073709551616"))})
	policy("step-int64-max-plus-one", "100E", &resourcev1.CapacityRequestPolicy{Default: qp("0"), ValidRange: rng(qp("0"), nil, qp("9223372036854775808"))})
	policy("negative-min-step", "10", &resourcev1.CapacityRequestPolicy{Default: qp("-1"), ValidRange: rng(qp("-2"), nil, qp("1"))})
	policy("fractional-range", "10", &resourcev1.CapacityRequestPolicy{Default: qp("500m"), ValidRange: rng(qp("500m"), qp("2"), qp("500m"))})
	policy("fractional-misaligned", "10", &resourcev1.CapacityRequestPolicy{Default: qp("700m"), ValidRange: rng(qp("500m"), nil, qp("300m"))})
	policy("fractional-fine", "10", &resourcev1.CapacityRequestPolicy{Default: qp("1"), ValidRange: rng(qp("1u"), nil, qp("1"))})
	spec("taints", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices[0].Taints = []resourcev1.DeviceTaint{{Key: "example.com/taint", Value: "tainted", Effect: resourcev1.DeviceTaintEffectNoExecute},
			{Effect: resourcev1.DeviceTaintEffectNoSchedule}, {Key: badName, Value: badValue, Effect: "some-other-effect"},
			{Key: "k", Effect: resourcev1.DeviceTaintEffectNone, TimeAdded: &metav1.Time{Time: metav1.Now().Rfc3339Copy().Time}}}
	})
	spec("too-many-taints", func(s *resourcev1.ResourceSliceSpec) {
		for i := range resourcev1.DeviceTaintsMaxLength + 1 {
			s.Devices[0].Taints = append(s.Devices[0].Taints, resourcev1.DeviceTaint{Key: fmt.Sprintf("k%d", i), Effect: resourcev1.DeviceTaintEffectNoSchedule})
		}
	})
	spec("per-device-node-selection", func(s *resourcev1.ResourceSliceSpec) {
		s.NodeName, s.PerDeviceNodeSelection = nil, ptr.To(true)
		s.Devices = append(s.Devices, resourcev1.Device{Name: "d2", NodeName: ptr.To("")}, resourcev1.Device{Name: "d3", AllNodes: ptr.To(false)},
			resourcev1.Device{Name: "d4", NodeName: ptr.To("n"), AllNodes: ptr.To(true)}, resourcev1.Device{Name: "d5", NodeName: ptr.To(badName)},
			resourcev1.Device{Name: "d6", NodeSelector: &corev1.NodeSelector{}})
		s.Devices[0].AllNodes = ptr.To(true)
	})
	spec("false-per-device-node-selection", func(s *resourcev1.ResourceSliceSpec) {
		s.PerDeviceNodeSelection = ptr.To(false)
		s.Devices[0].NodeName = ptr.To("n")
	})
	spec("shared-counters", func(s *resourcev1.ResourceSliceSpec) {
		s.NodeName, s.Devices, s.AllNodes = nil, nil, ptr.To(true)
		s.SharedCounters = []resourcev1.CounterSet{{Name: "", Counters: nil}, {Name: badName, Counters: map[string]resourcev1.Counter{badName: {Value: q("1")}}},
			{Name: "a", Counters: map[string]resourcev1.Counter{"x": {Value: q("1")}}}, {Name: "a", Counters: map[string]resourcev1.Counter{"y": {Value: q("1")}}}}
	})
	spec("too-many-shared-counters", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices = nil
		for i := range resourcev1.ResourceSliceMaxCounterSets + 1 {
			s.SharedCounters = append(s.SharedCounters, resourcev1.CounterSet{Name: fmt.Sprintf("s%d", i), Counters: map[string]resourcev1.Counter{"c": {Value: q("1")}}})
		}
	})
	spec("too-many-counters", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices = nil
		m := map[string]resourcev1.Counter{}
		for i := range resourcev1.ResourceSliceMaxCountersPerCounterSet + 1 {
			m[fmt.Sprintf("c%d", i)] = resourcev1.Counter{Value: q("1")}
		}
		s.SharedCounters = []resourcev1.CounterSet{{Name: "s", Counters: m}}
	})
	spec("consumes-counters", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices[0].ConsumesCounters = []resourcev1.DeviceCounterConsumption{{CounterSet: ""}, {CounterSet: badName,
			Counters: map[string]resourcev1.Counter{badName: {Value: q("1")}}}, {CounterSet: "a", Counters: map[string]resourcev1.Counter{"x": {Value: q("1")}},
			CompatibilityGroups: []string{"g"}}}
		s.Devices[1].ConsumesCounters = []resourcev1.DeviceCounterConsumption{{CounterSet: "a", Counters: map[string]resourcev1.Counter{"x": {}}},
			{CounterSet: "a", Counters: map[string]resourcev1.Counter{"y": {}}}}
	})
	spec("too-many-devices-with-consumes-counters", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices = devices(resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures+1, func(i int, d *resourcev1.Device) {
			d.ConsumesCounters = []resourcev1.DeviceCounterConsumption{{CounterSet: "a", Counters: map[string]resourcev1.Counter{"x": {}}}}
		})
	})
	spec("partition-type-dropped", func(s *resourcev1.ResourceSliceSpec) {
		s.PartitionTypeAttribute = ptr.To[resourcev1.FullyQualifiedName]("dra.example.com/type")
	})
	spec("skip-node-operations-dropped", func(s *resourcev1.ResourceSliceSpec) {
		s.SkipNodeOperations = []resourcev1.SkipNodeOperation{resourcev1.SkipNodeOperationNodePrepareResources}
	})
	spec("binding-conditions", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices[0].BindingConditions, s.Devices[0].BindingFailureConditions = []string{"a", "a", "bad key", "c", "d"}, []string{"a", "x", "x", "y", "z"}
		s.Devices[1].BindingFailureConditions = []string{"x"}
		s.Devices = append(s.Devices, resourcev1.Device{Name: "d2", BindingConditions: []string{"x"}, BindsToNode: ptr.To(true)})
	})
	spec("node-allocatable-dropped", func(s *resourcev1.ResourceSliceSpec) {
		s.Devices[0].NodeAllocatableResources = map[corev1.ResourceName]resourcev1.NodeAllocatableResource{"cpu": {}}
	})
	return out
}

// stored is obj as written by an earlier create (defaulted, resourceVersion 1).
func stored[T metav1.Object](obj T) T {
	obj.SetResourceVersion("1")
	obj.SetGeneration(1)
	return obj
}

// asUpdate makes a table object an update of old: same name and
// resourceVersion, old's generation unless the case sets one. It says no
// for cases only a create can send: a namespace on a cluster-scoped kind
// or none on a namespaced one (the server takes the request's), a
// generateName without a name (generated first), parameters that are no
// JSON (a body's are parsed).
func asUpdate(name string, obj, old metav1.Object) bool {
	if strings.Contains(name, "namespace-mismatch") || strings.Contains(name, "generate-name") || strings.HasSuffix(name, "configuration") {
		return false
	}
	obj.SetName(old.GetName())
	obj.SetResourceVersion("1")
	if obj.GetGeneration() == 0 {
		obj.SetGeneration(old.GetGeneration())
	}
	return true
}

func tableUpdates(t *testing.T, cat *registry.Catalogue, c *tally) {
	update := func(name string, obj, old runtime.Object, status bool) {
		compare(t, cat, write{Name: name, Obj: obj, Old: old, Status: status, Defaulted: true}, c)
	}
	for name, o := range classCases() {
		old := stored(validClass())
		if !asUpdate(name, o, old) {
			continue
		}
		update("class update to "+name, o, old, false)
	}
	bigConfig := stored(validClass())
	bigConfig.Spec.Config = []resourcev1.DeviceClassConfiguration{{DeviceConfiguration: opaque(goodName, sizedParams(resourcev1.OpaqueParametersMaxLength+1))}}
	relabelled := bigConfig.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	update("class too-large-config-valid-if-stored", relabelled, bigConfig, false)
	badSelectorClass := stored(validClass())
	badSelectorClass.Spec.Selectors = []resourcev1.DeviceSelector{selector("noSuchVar")}
	update("class stored bad selector", badSelectorClass.DeepCopy(), badSelectorClass, false)
	for name, o := range taintRuleCases() {
		old := stored(validTaintRule())
		if !asUpdate(name, o, old) {
			continue
		}
		update("taint rule update to "+name, o, old, false)
		update("taint rule status over "+name, o, old, true)
	}
	oddEffect := stored(validTaintRule())
	oddEffect.Spec.Taint.Effect = "some-other-effect"
	labelled := oddEffect.DeepCopy()
	labelled.Labels = map[string]string{"a": "b"}
	update("taint rule existing unknown effect", labelled, oddEffect, false)
	conds := stored(validTaintRule())
	conds.Status.Conditions = []metav1.Condition{{Type: "EvictionInProgress", Status: "True", Reason: "R", LastTransitionTime: metav1.Now().Rfc3339Copy()}, {Type: "x"}}
	update("taint rule status conditions", conds, stored(validTaintRule()), true)
	for name, o := range claimCases() {
		old := stored(validClaim())
		if !asUpdate(name, o, old) {
			continue
		}
		update("claim update to "+name, o, old, false)
	}
	for name, o := range templateCases() {
		old := stored(&resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: goodName, Namespace: adminNamespace},
			Spec: resourcev1.ResourceClaimTemplateSpec{Spec: validClaimSpec()}})
		if !asUpdate(name, o, old) {
			continue
		}
		update("template update to "+name, o, old, false)
	}
	for name, pair := range claimStatusCases() {
		obj, old := pair[0], stored(pair[1])
		obj.ResourceVersion = "1"
		update("claim status "+name, obj, old, true)
		update("claim main write "+name, obj.DeepCopy(), old, false)
	}
	for name, o := range sliceCases() {
		old := stored(validSlice())
		if !asUpdate(name, o, old) {
			continue
		}
		update("slice update to "+name, o, old, false)
	}
	sliceUpdates(update)
}

// sliceUpdates are TestValidateResourceSliceUpdate's scenarios.
func sliceUpdates(update func(name string, obj, old runtime.Object, status bool)) {
	change := func(name string, old *resourcev1.ResourceSlice, f func(*resourcev1.ResourceSliceSpec)) {
		old = stored(old)
		s := old.DeepCopy()
		f(&s.Spec)
		update("slice "+name, s, old, false)
	}
	change("no-op", validSlice(), func(*resourcev1.ResourceSliceSpec) {})
	change("nodename", validSlice(), func(s *resourcev1.ResourceSliceSpec) { s.NodeName = ptr.To("other") })
	change("drivername", validSlice(), func(s *resourcev1.ResourceSliceSpec) { s.Driver += "-other" })
	change("pool", validSlice(), func(s *resourcev1.ResourceSliceSpec) { s.Pool.Name += "-other" })
	change("pool-generation", validSlice(), func(s *resourcev1.ResourceSliceSpec) { s.Pool.Generation++ })
	change("to-node-selector", validSlice(), func(s *resourcev1.ResourceSliceSpec) {
		s.NodeName = nil
		s.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "k", Operator: corev1.NodeSelectorOpIn, Values: []string{"bad value"}}}}}}
	})
	withEffect := validSlice()
	withEffect.Spec.Devices[0].Taints = []resourcev1.DeviceTaint{{Key: "k", Effect: "some-other-effect", TimeAdded: &metav1.Time{Time: metav1.Now().Rfc3339Copy().Time}}}
	change("old-effect", withEffect, func(s *resourcev1.ResourceSliceSpec) { s.Pool.Generation++ })
	change("new-effect-in-old-device", withEffect, func(s *resourcev1.ResourceSliceSpec) { s.Devices[0].Taints[0].Effect = "other-effect" })
	change("new-effect-in-new-device", withEffect, func(s *resourcev1.ResourceSliceSpec) {
		s.Devices = append(s.Devices, resourcev1.Device{Name: "d2", Taints: []resourcev1.DeviceTaint{{Key: "k", Effect: "other"}}})
	})
	withPolicy := validSlice()
	withPolicy.Spec.Devices[0].AllowMultipleAllocations = ptr.To(true)
	withPolicy.Spec.Devices[0].Capacity = policyCapacity("10Gi", &resourcev1.CapacityRequestPolicy{Default: qp("3Gi"),
		ValidValues: []resource.Quantity{q("1Gi"), q("1Gi")}})
	change("capacity-okay-if-stored", withPolicy, func(s *resourcev1.ResourceSliceSpec) { s.Pool.Generation++ })
	change("capacity-changed", withPolicy, func(s *resourcev1.ResourceSliceSpec) {
		s.Devices[0].Capacity = policyCapacity("20Gi", s.Devices[0].Capacity["memory"].RequestPolicy)
	})
	withList := validSlice()
	withList.Spec.Devices[0].Attributes = map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"ints": {IntValues: []int64{1, 2}}, "bad": {}}
	change("list-attributes-kept", withList, func(s *resourcev1.ResourceSliceSpec) {
		s.Devices[0].Attributes["strs"] = resourcev1.DeviceAttribute{StringValues: []string{strings.Repeat("x", 65)}}
		s.Devices[0].Attributes["empty"] = resourcev1.DeviceAttribute{VersionValues: []string{}}
	})
	withSkip := validSlice()
	withSkip.Spec.SkipNodeOperations = []resourcev1.SkipNodeOperation{resourcev1.SkipNodeOperationAll}
	change("skip-node-operations-kept", withSkip, func(s *resourcev1.ResourceSliceSpec) {
		s.SkipNodeOperations = []resourcev1.SkipNodeOperation{"NodePrepareResources", "NodePrepareResources", "Other"}
	})
	withType := validSlice()
	withType.Spec.PartitionTypeAttribute = ptr.To[resourcev1.FullyQualifiedName]("dra.example.com/type")
	change("partition-type-kept", withType, func(s *resourcev1.ResourceSliceSpec) {
		s.PartitionTypeAttribute = ptr.To[resourcev1.FullyQualifiedName]("bad")
	})
	withAllocatable := validSlice()
	withAllocatable.Spec.Devices[0].Capacity = map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"mem": {Value: q("1Gi")}}
	withAllocatable.Spec.Devices[0].NodeAllocatableResources = map[corev1.ResourceName]resourcev1.NodeAllocatableResource{
		"memory": {Mapping: &resourcev1.NodeAllocatableMapping{CapacityKey: ptr.To[resourcev1.QualifiedName]("mem"), CapacityMultiplier: qp("1")}}}
	change("node-allocatable-kept", withAllocatable, func(s *resourcev1.ResourceSliceSpec) {
		s.Devices[0].NodeAllocatableResources = map[corev1.ResourceName]resourcev1.NodeAllocatableResource{
			"memory":            {Mapping: &resourcev1.NodeAllocatableMapping{CapacityKey: ptr.To[resourcev1.QualifiedName]("nope"), DeviceMultiplier: qp("0")}},
			"cpu":               {Mapping: &resourcev1.NodeAllocatableMapping{CapacityMultiplier: qp("-1")}},
			"hugepages-2Mi":     {Overhead: &resourcev1.NodeAllocatableOverhead{}},
			"ephemeral-storage": {Overhead: &resourcev1.NodeAllocatableOverhead{PerPod: qp("-1"), PerContainer: qp("-1")}},
			"example.com/x":     {},
			"hugepages-1Gi":     {Mapping: &resourcev1.NodeAllocatableMapping{CapacityKey: ptr.To[resourcev1.QualifiedName]("")}}}
	})
}
