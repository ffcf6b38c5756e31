package resourcevalidation

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// writesPerKind are the generated creates, updates and (for claims and
// taint rules) status writes compared per kind.
const writesPerKind = 2000

var kinds = []string{"DeviceClass", "DeviceTaintRule", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"}

func TestGenerated(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	for ki, kind := range kinds {
		g := &generator{rng: rand.New(rand.NewSource(int64(ki + 1)))}
		status := kind == "ResourceClaim" || kind == "DeviceTaintRule"
		for i := range writesPerKind {
			w := write{Name: fmt.Sprintf("%s #%d create", kind, i), Defaulted: !g.chance(8)}
			switch g.rng.Intn(3) {
			case 0:
				w.Obj = g.object(kind)
			case 1:
				w.Old = g.stored(kind)
				w.Name, w.Obj, w.Defaulted = fmt.Sprintf("%s #%d update", kind, i), g.changed(w.Old), true
			default:
				w.Old = g.stored(kind)
				w.Status = status
				w.Name, w.Obj, w.Defaulted = fmt.Sprintf("%s #%d update (status %v)", kind, i, w.Status), g.changed(w.Old), true
			}
			compare(t, cat, w, &c)
		}
	}
	t.Log(c.String())
	if c.Refused < len(kinds)*writesPerKind/4 || c.Accepted < len(kinds)*writesPerKind/5 || c.Warned == 0 {
		t.Errorf("generated writes are too one-sided: %s", c.String())
	}
}

type generator struct{ rng *rand.Rand }

func (g *generator) pick(options ...string) string { return options[g.rng.Intn(len(options))] }

func (g *generator) chance(n int) bool { return g.rng.Intn(n) == 0 }

// mostly returns valid three times in four, else any of the others.
func (g *generator) mostly(valid string, others ...string) string {
	if g.rng.Intn(4) != 0 {
		return valid
	}
	return g.pick(others...)
}

// rarely returns valid but one time in eight.
func (g *generator) rarely(valid string, others ...string) string {
	if g.rng.Intn(8) != 0 {
		return valid
	}
	return g.pick(others...)
}

// n is 0 to max items, mostly few.
func (g *generator) n(max int) int {
	if g.chance(20) {
		return max
	}
	return g.rng.Intn(3)
}

func (g *generator) strPtr(valid string, others ...string) *string {
	if g.chance(2) {
		return nil
	}
	return ptr.To(g.mostly(valid, others...))
}

var (
	driverNames = []string{"dra.example.com", "DRA.Example.com", "", "a/b", "_bad", strings.Repeat("a", 64), "x"}
	poolNames   = []string{"pool-1", "", "a/b", "Bad_Pool", "a//b", strings.Repeat("p", 254), "node-1"}
	labelNames  = []string{"example.com/taint", "", "bad key", "a/b/c", "k"}
	attrNames   = []string{"model", "dra.example.com/model", "Bad-Name", "a/b/c", "/x", "x/", strings.Repeat("n", 33), "Dom_ain/x"}
	expressions = []string{`device.driver == "dra.example.com"`, "true", "noSuchVar", `device.attributes["dra.example.com"].model == "a"`,
		`device.capacity["dra.example.com"].memory.compareTo(quantity("1Gi")) >= 0`, "1", `device.attributes[true].x`, "", costlyExpression,
		`device.allowMultipleAllocations`}
)

func (g *generator) meta(name string, namespaced bool) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: g.mostly(name, "", "Bad_Name", "a/b", "x.y", strings.Repeat("n", 254))}
	if m.Name == "" && g.chance(2) {
		m.Name, m.GenerateName = "gen-x1", g.pick("gen-", "Bad_")
	}
	if namespaced {
		m.Namespace = adminNamespace
	}
	if g.chance(8) {
		m.Labels = map[string]string{g.mostly("app", "bad key!"): g.mostly("web", "bad value!")}
	}
	if g.chance(15) {
		m.Finalizers = []string{g.pick("cleanup", "example.com/x", "kubernetes")}
	}
	if g.chance(6) {
		m.Generation = int64(g.rng.Intn(4) - 1)
	}
	return m
}

func (g *generator) object(kind string) runtime.Object {
	switch kind {
	case "DeviceClass":
		return &resourcev1.DeviceClass{ObjectMeta: g.meta("gpu.example.com", false), Spec: g.classSpec()}
	case "DeviceTaintRule":
		return &resourcev1.DeviceTaintRule{ObjectMeta: g.meta("rule-1", false), Spec: resourcev1.DeviceTaintRuleSpec{
			DeviceSelector: g.taintSelector(), Taint: g.taint()}, Status: g.ruleStatus()}
	case "ResourceClaim":
		c := &resourcev1.ResourceClaim{ObjectMeta: g.meta("claim-1", true), Spec: g.claimSpec()}
		if g.chance(4) {
			c.Status = g.claimStatus(&c.Spec)
		}
		return c
	case "ResourceClaimTemplate":
		t := &resourcev1.ResourceClaimTemplate{ObjectMeta: g.meta("tmpl-1", true), Spec: resourcev1.ResourceClaimTemplateSpec{Spec: g.claimSpec()}}
		if g.chance(6) {
			t.Spec.Labels = map[string]string{g.mostly("a", "bad key!"): "b"}
		}
		if g.chance(10) {
			t.Spec.Name = "not-allowed"
		}
		return t
	}
	return &resourcev1.ResourceSlice{ObjectMeta: g.meta("slice-1", false), Spec: g.sliceSpec()}
}

func (g *generator) classSpec() resourcev1.DeviceClassSpec {
	s := resourcev1.DeviceClassSpec{Selectors: g.selectors(), Config: nil}
	for range g.n(33) {
		s.Config = append(s.Config, resourcev1.DeviceClassConfiguration{DeviceConfiguration: g.config()})
	}
	if g.chance(3) {
		s.ExtendedResourceName = ptr.To(g.mostly("example.com/gpu", "example.com", "cpu", "requests.example.com/x", "kubernetes.io/x"))
	}
	return s
}

func (g *generator) selectors() []resourcev1.DeviceSelector {
	var out []resourcev1.DeviceSelector
	for range g.n(33) {
		if g.chance(10) {
			out = append(out, resourcev1.DeviceSelector{})
			continue
		}
		out = append(out, selector(g.mostly(expressions[0], expressions[1:]...)))
	}
	return out
}

func (g *generator) config() resourcev1.DeviceConfiguration {
	if g.chance(10) {
		return resourcev1.DeviceConfiguration{}
	}
	return opaque(g.mostly("dra.example.com", driverNames...), g.mostly(`{"a":1}`, ``, `"x"`, `null`, `[]`,
		sizedParams(resourcev1.OpaqueParametersMaxLength+1)))
}

func (g *generator) taintSelector() *resourcev1.DeviceTaintSelector {
	if g.chance(4) {
		return nil
	}
	return &resourcev1.DeviceTaintSelector{Driver: g.strPtr("dra.example.com", driverNames...), Pool: g.strPtr("pool-1", poolNames...),
		Device: g.strPtr("gpu-0", "", "Bad_Device", "a.b")}
}

var effects = []string{"NoSchedule", "NoExecute", "None", "", "Other"}

func (g *generator) taint() resourcev1.DeviceTaint {
	t := resourcev1.DeviceTaint{Key: g.mostly("example.com/taint", labelNames...), Value: g.mostly("v", "", "bad value!", strings.Repeat("v", 64)),
		Effect: resourcev1.DeviceTaintEffect(g.mostly(g.pick(effects[:3]...), effects...))}
	if g.chance(2) {
		t.TimeAdded = &metav1.Time{Time: metav1.Now().Rfc3339Copy().Add(-1e9 * 3600)}
	}
	return t
}

func (g *generator) conditions() []metav1.Condition {
	var out []metav1.Condition
	for range g.n(9) {
		out = append(out, metav1.Condition{Type: g.mostly("Ready", "", "bad type!", "Ready"), Status: metav1.ConditionStatus(g.mostly("True", "", "Maybe")),
			Reason: g.mostly("Fine", "", "bad reason"), LastTransitionTime: metav1.Now().Rfc3339Copy()})
	}
	return out
}

func (g *generator) ruleStatus() resourcev1.DeviceTaintRuleStatus {
	return resourcev1.DeviceTaintRuleStatus{Conditions: g.conditions()}
}

func (g *generator) toleration() resourcev1.DeviceToleration {
	t := resourcev1.DeviceToleration{Key: g.mostly("example.com/taint", labelNames...),
		Operator: resourcev1.DeviceTolerationOperator(g.mostly(g.pick("Equal", "Exists"), "", "Other")),
		Value:    g.mostly("", "v", "bad value!"), Effect: resourcev1.DeviceTaintEffect(g.mostly("", effects...))}
	if g.chance(3) {
		t.TolerationSeconds = ptr.To(int64(g.rng.Intn(100) - 10))
	}
	return t
}

func (g *generator) tolerations() []resourcev1.DeviceToleration {
	var out []resourcev1.DeviceToleration
	for range g.n(3) {
		out = append(out, g.toleration())
	}
	return out
}

var modes = []string{"ExactCount", "All", "", "Other"}

func (g *generator) exact() *resourcev1.ExactDeviceRequest {
	r := &resourcev1.ExactDeviceRequest{DeviceClassName: g.mostly("gpu.example.com", "", "Bad_Class", "a/b"), Selectors: g.selectors(),
		AllocationMode: resourcev1.DeviceAllocationMode(g.mostly(g.pick(modes[:3]...), modes...)), Count: int64(g.rng.Intn(4) - 1),
		Tolerations: g.tolerations()}
	if g.chance(4) {
		r.AdminAccess = ptr.To(g.chance(2))
	}
	if g.chance(8) {
		r.Capacity = &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{"memory": resource.MustParse("1Gi")}}
	}
	if g.chance(10) {
		r.DerivedAttributes = []resourcev1.DeviceDerivedAttribute{{Name: "x", Expression: "1"}}
	}
	return r
}

func (g *generator) subRequest(name string) resourcev1.DeviceSubRequest {
	e := g.exact()
	return resourcev1.DeviceSubRequest{Name: name, DeviceClassName: e.DeviceClassName, Selectors: e.Selectors, AllocationMode: e.AllocationMode,
		Count: e.Count, Tolerations: e.Tolerations, Capacity: e.Capacity}
}

var requestNamePool = []string{"gpu", "nic", "Bad_Name", "", "gpu"}

func (g *generator) claimSpec() resourcev1.ResourceClaimSpec {
	var d resourcev1.DeviceClaim
	n := 1 + g.rng.Intn(3)
	if g.chance(30) {
		n = 33
	}
	for i := range n {
		name := g.mostly(fmt.Sprintf("req-%d", i), requestNamePool...)
		r := resourcev1.DeviceRequest{Name: name}
		switch g.rng.Intn(6) {
		case 0, 1, 2:
			r.Exactly = g.exact()
		case 3, 4:
			for j := range 1 + g.n(9) {
				r.FirstAvailable = append(r.FirstAvailable, g.subRequest(g.mostly(fmt.Sprintf("sub-%d", j), "sub-0", "Bad_Sub", "")))
			}
		default:
			if g.chance(2) {
				r.Exactly, r.FirstAvailable = g.exact(), []resourcev1.DeviceSubRequest{g.subRequest("s")}
			}
		}
		d.Requests = append(d.Requests, r)
	}
	refs := func() []string {
		var out []string
		for range g.n(3) {
			out = append(out, g.mostly("req-0", "req-1/sub-0", "req-0/sub-0", "nope", "a/b/c", "Bad_Name", "req-0"))
		}
		return out
	}
	for range g.n(33) {
		c := resourcev1.DeviceConstraint{Requests: refs()}
		switch g.rng.Intn(4) {
		case 0, 1:
			c.MatchAttribute = match(g.mostly("dra.example.com/model", "model", "", "a/b/c", "Bad/x"))
		case 2:
			c.DistinctAttribute = match(g.mostly("dra.example.com/model", "model", ""))
		}
		d.Constraints = append(d.Constraints, c)
	}
	for range g.n(33) {
		d.Config = append(d.Config, resourcev1.DeviceClaimConfiguration{Requests: refs(), DeviceConfiguration: g.config()})
	}
	return resourcev1.ResourceClaimSpec{Devices: d}
}

func (g *generator) result(spec *resourcev1.ResourceClaimSpec, i int) resourcev1.DeviceRequestAllocationResult {
	req := "req-0"
	if len(spec.Devices.Requests) > 0 {
		req = spec.Devices.Requests[g.rng.Intn(len(spec.Devices.Requests))].Name
	}
	r := resourcev1.DeviceRequestAllocationResult{Request: g.mostly(req, "nope", "req-0/sub-0", "Bad_Name"), Driver: g.mostly("dra.example.com", driverNames...),
		Pool: g.mostly("pool-1", poolNames...), Device: g.mostly(fmt.Sprintf("gpu-%d", i), "", "Bad_Device", "gpu-0"), Tolerations: g.tolerations()}
	if g.chance(2) {
		r.AdminAccess = ptr.To(g.chance(3))
	}
	if g.chance(4) {
		r.ShareID = ptr.To(types.UID(g.mostly(goodShare, "a", "Aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa", "")))
	}
	if g.chance(5) {
		r.BindingConditions = []string{g.mostly("ready", "bad key", "x")}
		if g.chance(4) {
			r.BindingConditions = append(r.BindingConditions, "a", "b", "c", "d")
		}
	}
	if g.chance(5) {
		r.BindingFailureConditions = []string{g.mostly("failed", "ready", "bad key")}
	}
	if g.chance(8) {
		r.SkipNodeOperations = []resourcev1.SkipNodeOperation{"NodePrepareResources"}
	}
	return r
}

func (g *generator) claimStatus(spec *resourcev1.ResourceClaimSpec) resourcev1.ResourceClaimStatus {
	var s resourcev1.ResourceClaimStatus
	if g.chance(3) {
		return s
	}
	a := &resourcev1.AllocationResult{}
	for i := range g.n(33) {
		a.Devices.Results = append(a.Devices.Results, g.result(spec, i))
	}
	for range g.n(2) {
		a.Devices.Config = append(a.Devices.Config, resourcev1.DeviceAllocationConfiguration{
			Source: resourcev1.AllocationConfigSource(g.mostly(g.pick("FromClaim", "FromClass"), "", "Other")), Requests: []string{g.mostly("req-0", "nope")},
			DeviceConfiguration: g.config()})
	}
	if g.chance(2) {
		a.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: g.mostly("metadata.name", "spec.x"), Operator: corev1.NodeSelectorOperator(g.mostly("In", "Exists", "Gt")), Values: []string{g.mostly("node-1", "Bad_Node")}}}}}}
		if g.chance(5) {
			a.NodeSelector.NodeSelectorTerms = nil
		}
	}
	s.Allocation = a
	for i := range g.n(3) {
		s.ReservedFor = append(s.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: g.mostly("pods", ""), Name: g.mostly(fmt.Sprintf("p%d", i), ""),
			UID: types.UID(g.mostly(fmt.Sprint(i), "", "0"))})
	}
	for _, r := range a.Devices.Results {
		if !g.chance(3) {
			continue
		}
		d := resourcev1.AllocatedDeviceStatus{Driver: r.Driver, Pool: r.Pool, Device: g.mostly(r.Device, "other"), Conditions: g.conditions()}
		if r.ShareID != nil && !g.chance(4) {
			d.ShareID = ptr.To(string(*r.ShareID))
		}
		if g.chance(3) {
			d.Data = &runtime.RawExtension{Raw: []byte(g.mostly(`{"a":1}`, `"x"`, `null`, sizedParams(resourcev1.AllocatedDeviceStatusDataMaxLength+1)))}
		}
		if g.chance(3) {
			d.NetworkData = &resourcev1.NetworkDeviceData{InterfaceName: g.mostly("eth0", strings.Repeat("x", 257)),
				IPs: []string{g.mostly("10.0.0.1/24", "300.0.0.1/24", "10.0.0.1"), g.mostly("2001:db8::1/64", "10.0.0.1/24")}, HardwareAddress: g.mostly("ea:9f:cb:40:b1:7b", strings.Repeat("x", 129))}
		}
		s.Devices = append(s.Devices, d)
	}
	return s
}

func (g *generator) quantity(options ...string) resource.Quantity {
	return resource.MustParse(g.pick(options...))
}

func (g *generator) qptr(options ...string) *resource.Quantity {
	if g.chance(3) {
		return nil
	}
	return ptr.To(g.quantity(options...))
}

func (g *generator) attribute() resourcev1.DeviceAttribute {
	var a resourcev1.DeviceAttribute
	for range 1 + g.n(2) {
		switch g.rng.Intn(9) {
		case 0:
			a.IntValue = ptr.To(int64(g.rng.Intn(10)))
		case 1:
			a.BoolValue = ptr.To(true)
		case 2, 3:
			a.StringValue = ptr.To(g.mostly("a100", strings.Repeat("x", 65), ""))
		case 4:
			a.VersionValue = ptr.To(g.mostly("1.0.0", "1.0", "v1.0.0", "1.0.0-alpha+build"))
		case 5:
			a.IntValues = []int64{1}
		case 6:
			a.StringValues = []string{}
		}
	}
	return a
}

func (g *generator) capacity(multi bool) resourcev1.DeviceCapacity {
	c := resourcev1.DeviceCapacity{Value: g.quantity("10Gi", "10", "1", "500m")}
	if !multi && !g.chance(6) || g.chance(3) {
		return c
	}
	p := &resourcev1.CapacityRequestPolicy{Default: g.qptr("1Gi", "1", "2", "500m", "20Gi")}
	if g.chance(2) {
		for range g.n(11) + 1 {
			p.ValidValues = append(p.ValidValues, g.quantity("1Gi", "2Gi", "1", "500m", "20Gi", "1"))
		}
	}
	if g.chance(2) {
		p.ValidRange = &resourcev1.CapacityRequestPolicyRange{Min: g.qptr("1", "1Gi", "500m", "-1", "11Gi"), Max: g.qptr("9Gi", "2", "1", "11Gi"),
			Step: g.qptr("1", "1Gi", "0", "-1", "300m", "9223372036854775808", "18446744073709551616")}
	}
	c.RequestPolicy = p
	return c
}

func (g *generator) device(i int, perDevice bool) resourcev1.Device {
	d := resourcev1.Device{Name: g.mostly(fmt.Sprintf("gpu-%d", i), "gpu-0", "Bad_Device", "")}
	if g.chance(2) {
		d.Attributes = map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}
		for range 1 + g.n(33) {
			d.Attributes[resourcev1.QualifiedName(g.mostly(fmt.Sprintf("a%d", g.rng.Intn(40)), attrNames...))] = g.attribute()
		}
	}
	if g.chance(4) {
		d.AllowMultipleAllocations = ptr.To(g.chance(2))
	}
	if g.chance(2) {
		multi := d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations
		d.Capacity = map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{resourcev1.QualifiedName(g.mostly("memory", attrNames...)): g.capacity(multi)}
	}
	for range g.n(17) {
		d.Taints = append(d.Taints, g.taint())
	}
	for range g.n(3) {
		d.ConsumesCounters = append(d.ConsumesCounters, resourcev1.DeviceCounterConsumption{CounterSet: g.mostly("set-1", "", "Bad_Set", "set-1"),
			Counters: map[string]resourcev1.Counter{g.mostly("mem", "Bad_Counter"): {Value: g.quantity("1", "1Gi")}}})
	}
	if perDevice || g.chance(10) {
		switch g.rng.Intn(4) {
		case 0:
			d.NodeName = ptr.To(g.mostly("node-1", "", "Bad_Node"))
		case 1:
			d.AllNodes = ptr.To(!g.chance(4))
		case 2:
			d.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: g.mostly("zone", "bad key"), Operator: corev1.NodeSelectorOperator(g.mostly("In", "Foo", "Exists")), Values: []string{"a"}}}}}}
		}
	}
	if g.chance(6) {
		d.BindingConditions = []string{g.mostly("ready", "bad key")}
		d.BindingFailureConditions = []string{g.mostly("failed", "ready")}
		d.BindsToNode = ptr.To(true)
	}
	return d
}

func (g *generator) sliceSpec() resourcev1.ResourceSliceSpec {
	s := resourcev1.ResourceSliceSpec{Driver: g.mostly("dra.example.com", driverNames...),
		Pool: resourcev1.ResourcePool{Name: g.mostly("pool-1", poolNames...), Generation: int64(g.rng.Intn(3) - 1), ResourceSliceCount: int64(g.rng.Intn(3))}}
	switch g.rng.Intn(6) {
	case 0, 1:
		s.NodeName = ptr.To(g.mostly("node-1", "", "Bad_Node"))
	case 2:
		s.AllNodes = ptr.To(!g.chance(4))
	case 3:
		s.PerDeviceNodeSelection = ptr.To(!g.chance(4))
	case 4:
		s.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: "In", Values: []string{g.mostly("node-1", "Bad_Node")}}}}}}
		if g.chance(4) {
			s.NodeSelector.NodeSelectorTerms = append(s.NodeSelector.NodeSelectorTerms, corev1.NodeSelectorTerm{})
		}
	default:
		s.NodeName, s.AllNodes = ptr.To("node-1"), ptr.To(true)
	}
	n := g.n(5)
	if g.chance(15) {
		n = 65 + g.rng.Intn(70)
	}
	perDevice := s.PerDeviceNodeSelection != nil && *s.PerDeviceNodeSelection
	for i := range n {
		s.Devices = append(s.Devices, g.device(i, perDevice))
	}
	if g.chance(5) {
		for range g.n(9) + 1 {
			s.SharedCounters = append(s.SharedCounters, resourcev1.CounterSet{Name: g.mostly("set-1", "", "Bad_Set", "set-2"),
				Counters: map[string]resourcev1.Counter{g.mostly("mem", "Bad_Counter", ""): {Value: g.quantity("1", "1Gi")}}})
		}
	}
	if g.chance(10) {
		s.PartitionTypeAttribute = match(g.mostly("dra.example.com/type", "bad"))
	}
	if g.chance(10) {
		s.SkipNodeOperations = []resourcev1.SkipNodeOperation{resourcev1.SkipNodeOperation(g.pick("All", "NodePrepareResources"))}
	}
	return s
}

// stored returns a valid (as far as the generator goes) defaulted object of
// kind, as the server would have stored it.
func (g *generator) stored(kind string) runtime.Object {
	var obj runtime.Object
	for attempt := 0; ; attempt++ {
		obj = g.object(kind)
		m := obj.(metav1.Object)
		m.SetName(map[string]string{"DeviceClass": "gpu.example.com"}[kind] + "x")
		m.SetGenerateName("")
		m.SetLabels(nil)
		m.SetFinalizers(nil)
		m.SetGeneration(1)
		m.SetResourceVersion("1")
		legacyscheme.Scheme.Default(obj)
		if attempt > 50 || g.chance(4) {
			break
		}
	}
	return obj
}

// changed is an update of old: a few fields of a new object of the kind
// mixed into a copy of old.
func (g *generator) changed(old runtime.Object) runtime.Object {
	obj := old.DeepCopyObject()
	fresh := g.object(kindOf(old))
	switch o := obj.(type) {
	case *resourcev1.DeviceClass:
		f := fresh.(*resourcev1.DeviceClass)
		g.maybe(func() { o.Spec.Selectors = f.Spec.Selectors }, func() { o.Spec.Config = f.Spec.Config },
			func() { o.Spec.ExtendedResourceName = f.Spec.ExtendedResourceName }, func() { o.Labels = f.Labels })
	case *resourcev1.DeviceTaintRule:
		f := fresh.(*resourcev1.DeviceTaintRule)
		g.maybe(func() { o.Spec.DeviceSelector = f.Spec.DeviceSelector }, func() { o.Spec.Taint.Effect = f.Spec.Taint.Effect },
			func() { o.Spec.Taint = f.Spec.Taint }, func() { o.Status = f.Status }, func() { o.Labels = f.Labels })
	case *resourcev1.ResourceClaim:
		f := fresh.(*resourcev1.ResourceClaim)
		g.maybe(func() { o.Spec = f.Spec }, func() { o.Status = g.claimStatus(&o.Spec) }, func() { g.tweakStatus(&o.Status) },
			func() { o.Labels = f.Labels }, func() { o.Status.ReservedFor = nil }, func() { o.Status.Allocation = nil })
	case *resourcev1.ResourceClaimTemplate:
		f := fresh.(*resourcev1.ResourceClaimTemplate)
		g.maybe(func() { o.Spec = f.Spec }, func() { o.Labels = f.Labels }, func() { o.Spec.Labels = map[string]string{"x": "y"} })
	case *resourcev1.ResourceSlice:
		f := fresh.(*resourcev1.ResourceSlice)
		g.maybe(func() { o.Spec.Devices = f.Spec.Devices }, func() { o.Spec.Driver = f.Spec.Driver }, func() { o.Spec.Pool = f.Spec.Pool },
			func() { o.Spec.NodeName = f.Spec.NodeName }, func() { g.tweakDevices(o.Spec.Devices, f.Spec.Devices) },
			func() { o.Spec.SharedCounters = f.Spec.SharedCounters }, func() { o.Spec.SkipNodeOperations = f.Spec.SkipNodeOperations },
			func() { o.Spec.PartitionTypeAttribute = f.Spec.PartitionTypeAttribute }, func() { o.Labels = f.Labels })
	}
	return obj
}

// maybe applies one to three of changes.
func (g *generator) maybe(changes ...func()) {
	for range 1 + g.rng.Intn(3) {
		changes[g.rng.Intn(len(changes))]()
	}
}

// tweakStatus changes one thing of an allocation in place.
func (g *generator) tweakStatus(s *resourcev1.ResourceClaimStatus) {
	if s.Allocation == nil || len(s.Allocation.Devices.Results) == 0 {
		return
	}
	r := &s.Allocation.Devices.Results[g.rng.Intn(len(s.Allocation.Devices.Results))]
	g.maybe(func() { r.Driver = g.pick(driverNames...) }, func() { r.Tolerations = g.tolerations() },
		func() { s.Devices = g.claimStatus(&resourcev1.ResourceClaimSpec{}).Devices }, func() { s.ReservedFor = append(s.ReservedFor, s.ReservedFor...) })
}

// tweakDevices mixes some of fresh's devices' fields into devs, keeping
// their names.
func (g *generator) tweakDevices(devs, fresh []resourcev1.Device) {
	for i := range min(len(devs), len(fresh)) {
		d, f := &devs[i], fresh[i]
		g.maybe(func() { d.Attributes = f.Attributes }, func() { d.Capacity = f.Capacity }, func() { d.Taints = f.Taints },
			func() { d.ConsumesCounters = f.ConsumesCounters }, func() { d.AllowMultipleAllocations = f.AllowMultipleAllocations },
			func() {
				if len(d.Taints) > 0 {
					d.Taints[0].Effect = resourcev1.DeviceTaintEffect(g.pick(effects...))
				}
			})
	}
}

func kindOf(obj runtime.Object) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", obj), "*v1.")
}
