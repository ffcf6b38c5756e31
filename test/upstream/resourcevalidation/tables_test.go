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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// The inputs of upstream's own validation tests
// (pkg/apis/resource/validation/validation_*_test.go: TestValidateClass,
// TestValidateClassUpdate, TestValidateDeviceTaint(Update),
// TestValidateClaim, TestValidateClaimUpdate,
// TestValidateClaimStatusUpdate, TestValidateClaimTemplate(Update),
// TestValidateResourceSlice(Update) and the device capacity tests) as v1
// objects, each scenario's object with its own mutation, as creates (both
// as sent and as decoded, with defaults), updates and status writes.

const (
	goodName  = "foo"
	goodName2 = "bar"
	badName   = "!@#$%^"
	badValue  = "spaces not allowed"
	goodShare = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
)

var validParams = runtime.RawExtension{Raw: []byte(`{"kind": "foo", "apiVersion": "dra.example.com/v1"}`)}

// metaVariants are the metadata cases every kind's table has.
func metaVariants() map[string]func(*metav1.ObjectMeta) {
	return map[string]func(*metav1.ObjectMeta){
		"good":          func(*metav1.ObjectMeta) {},
		"missing-name":  func(m *metav1.ObjectMeta) { m.Name = "" },
		"bad-name":      func(m *metav1.ObjectMeta) { m.Name = badName },
		"generate-name": func(m *metav1.ObjectMeta) { m.GenerateName = "pvc-" },
		"bad-generate-name": func(m *metav1.ObjectMeta) {
			m.Name, m.GenerateName = "", "Bad_"
		},
		"uid":           func(m *metav1.ObjectMeta) { m.UID = "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d" },
		"generation":    func(m *metav1.ObjectMeta) { m.Generation = 100 },
		"creation-time": func(m *metav1.ObjectMeta) { m.CreationTimestamp = metav1.Now() },
		"grace-period":  func(m *metav1.ObjectMeta) { m.DeletionGracePeriodSeconds = ptr.To(int64(10)) },
		"owner-references": func(m *metav1.ObjectMeta) {
			m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "pod", Name: "foo", UID: "ac051fac"}}
		},
		"finalizers":    func(m *metav1.ObjectMeta) { m.Finalizers = []string{"example.com/foo"} },
		"bad-finalizer": func(m *metav1.ObjectMeta) { m.Finalizers = []string{"foo"} },
		"managed-fields": func(m *metav1.ObjectMeta) {
			m.ManagedFields = []metav1.ManagedFieldsEntry{{FieldsType: "FieldsV1", Operation: "Apply", APIVersion: "apps/v1", Manager: "foo"}}
		},
		"good-labels":      func(m *metav1.ObjectMeta) { m.Labels = map[string]string{"apps.kubernetes.io/name": "test"} },
		"bad-labels":       func(m *metav1.ObjectMeta) { m.Labels = map[string]string{"hello-world": badValue} },
		"good-annotations": func(m *metav1.ObjectMeta) { m.Annotations = map[string]string{"foo": "bar"} },
		"bad-annotations":  func(m *metav1.ObjectMeta) { m.Annotations = map[string]string{badName: "hello world"} },
		"namespace-mismatch": func(m *metav1.ObjectMeta) {
			if m.Namespace == "" {
				m.Namespace = "other"
			} else {
				m.Namespace = ""
			}
		},
	}
}

func validClass() *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: goodName}}
}

// opaque is an opaque configuration; "" leaves the parameters unset, as a
// body without them decodes (a JSON body never holds empty raw bytes).
func opaque(driver string, raw string) resourcev1.DeviceConfiguration {
	c := &resourcev1.OpaqueDeviceConfiguration{Driver: driver}
	if raw != "" {
		c.Parameters.Raw = []byte(raw)
	}
	return resourcev1.DeviceConfiguration{Opaque: c}
}

// sizedParams is a JSON object of exactly n bytes.
func sizedParams(n int) string { return `{"str": "` + strings.Repeat("x", n-11) + `"}` }

func selector(expr string) resourcev1.DeviceSelector {
	return resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: expr}}
}

const costlyExpression = `[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, ` +
	`[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, ` +
	`[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))`

func classCases() map[string]*resourcev1.DeviceClass {
	out := map[string]*resourcev1.DeviceClass{}
	for name, change := range metaVariants() {
		if name == "bad-generate-name" {
			// A class's metadata is checked after its name is generated
			// (upstream reports a generateName without a name as an
			// internal error), which both servers do first.
			continue
		}
		c := validClass()
		change(&c.ObjectMeta)
		out["meta "+name] = c
	}
	spec := func(name string, f func(*resourcev1.DeviceClassSpec)) {
		c := validClass()
		f(&c.Spec)
		out[name] = c
	}
	spec("good-extended-resource-name", func(s *resourcev1.DeviceClassSpec) { s.ExtendedResourceName = ptr.To("example.com/gpu") })
	spec("bad-extended-resource-name", func(s *resourcev1.DeviceClassSpec) { s.ExtendedResourceName = ptr.To("example.com") })
	spec("native-extended-resource-name", func(s *resourcev1.DeviceClassSpec) { s.ExtendedResourceName = ptr.To("cpu") })
	spec("selectors", func(s *resourcev1.DeviceClassSpec) {
		s.Selectors = []resourcev1.DeviceSelector{selector("true"), {}, selector("noSuchVar")}
		for len(s.Selectors) < resourcev1.DeviceSelectorsMaxSize {
			s.Selectors = append(s.Selectors, selector("true"))
		}
	})
	spec("too-many-selectors", func(s *resourcev1.DeviceClassSpec) {
		for range resourcev1.DeviceSelectorsMaxSize + 1 {
			s.Selectors = append(s.Selectors, selector("true"))
		}
	})
	spec("selector-cost", func(s *resourcev1.DeviceClassSpec) {
		s.Selectors = []resourcev1.DeviceSelector{selector(costlyExpression)}
	})
	spec("configuration", func(s *resourcev1.DeviceClassSpec) {
		conf := func(c resourcev1.DeviceConfiguration) resourcev1.DeviceClassConfiguration {
			return resourcev1.DeviceClassConfiguration{DeviceConfiguration: c}
		}
		s.Config = []resourcev1.DeviceClassConfiguration{conf(opaque(goodName, `{"foo":42}`)),
			{DeviceConfiguration: resourcev1.DeviceConfiguration{Opaque: &resourcev1.OpaqueDeviceConfiguration{}}},
			conf(opaque(goodName, `xxx`)), conf(opaque(goodName, `"hello-world"`)), conf(opaque(goodName, `null`)), {},
			conf(opaque(goodName, sizedParams(resourcev1.OpaqueParametersMaxLength))),
			conf(opaque(goodName, sizedParams(resourcev1.OpaqueParametersMaxLength+1)))}
		for len(s.Config) < resourcev1.DeviceConfigMaxSize {
			s.Config = append(s.Config, conf(opaque(goodName, `{"foo":42}`)))
		}
	})
	spec("too-many-configs", func(s *resourcev1.DeviceClassSpec) {
		for range resourcev1.DeviceConfigMaxSize + 1 {
			s.Config = append(s.Config, resourcev1.DeviceClassConfiguration{DeviceConfiguration: opaque(goodName, `{"foo":42}`)})
		}
	})
	return out
}

func validTaintRule() *resourcev1.DeviceTaintRule {
	return &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: goodName},
		Spec: resourcev1.DeviceTaintRuleSpec{DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To("test.example.com"),
			Pool: ptr.To(goodName), Device: ptr.To(goodName)},
			Taint: resourcev1.DeviceTaint{Key: "example.com/taint", Value: "tainted", Effect: resourcev1.DeviceTaintEffectNoSchedule,
				TimeAdded: &metav1.Time{Time: metav1.Now().Rfc3339Copy().Time}}}}
}

func taintRuleCases() map[string]*resourcev1.DeviceTaintRule {
	out := map[string]*resourcev1.DeviceTaintRule{}
	for name, change := range metaVariants() {
		r := validTaintRule()
		change(&r.ObjectMeta)
		out["meta "+name] = r
	}
	spec := func(name string, f func(*resourcev1.DeviceTaintRuleSpec)) {
		r := validTaintRule()
		f(&r.Spec)
		out[name] = r
	}
	spec("bad-driver", func(s *resourcev1.DeviceTaintRuleSpec) { s.DeviceSelector.Driver = ptr.To(badName) })
	spec("bad-pool", func(s *resourcev1.DeviceTaintRuleSpec) { s.DeviceSelector.Pool = ptr.To(badName) })
	spec("bad-device", func(s *resourcev1.DeviceTaintRuleSpec) { s.DeviceSelector.Device = ptr.To(badName) })
	spec("no-selector", func(s *resourcev1.DeviceTaintRuleSpec) { s.DeviceSelector = nil })
	spec("valid-taint", func(s *resourcev1.DeviceTaintRuleSpec) {
		s.Taint = resourcev1.DeviceTaint{Key: goodName, Value: goodName, Effect: resourcev1.DeviceTaintEffectNoExecute}
	})
	spec("required-effect", func(s *resourcev1.DeviceTaintRuleSpec) {
		s.Taint = resourcev1.DeviceTaint{Key: goodName, Value: goodName}
	})
	spec("invalid-effect", func(s *resourcev1.DeviceTaintRuleSpec) {
		s.Taint = resourcev1.DeviceTaint{Key: goodName, Value: goodName, Effect: "some-other-effect"}
	})
	spec("bad-key-and-value", func(s *resourcev1.DeviceTaintRuleSpec) { s.Taint.Key, s.Taint.Value = badName, badValue })
	spec("empty-key", func(s *resourcev1.DeviceTaintRuleSpec) { s.Taint.Key = "" })
	return out
}

func validClaimSpec() resourcev1.ResourceClaimSpec {
	return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: goodName,
		Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: goodName, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1}}}}}
}

func firstAvailableSpec() resourcev1.ResourceClaimSpec {
	sub := func(name string) resourcev1.DeviceSubRequest {
		return resourcev1.DeviceSubRequest{Name: name, DeviceClassName: goodName, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1}
	}
	return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: goodName,
		FirstAvailable: []resourcev1.DeviceSubRequest{sub(goodName), sub(goodName2)}}}}}
}

func validClaim() *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: goodName, Namespace: adminNamespace}, Spec: validClaimSpec()}
}

func claimConfig(requests []string) resourcev1.DeviceClaimConfiguration {
	return resourcev1.DeviceClaimConfiguration{Requests: requests, DeviceConfiguration: resourcev1.DeviceConfiguration{
		Opaque: &resourcev1.OpaqueDeviceConfiguration{Driver: "dra.example.com", Parameters: validParams}}}
}

func match(name string) *resourcev1.FullyQualifiedName {
	return ptr.To(resourcev1.FullyQualifiedName(name))
}

// claimSpecCases are the spec scenarios of TestValidateClaim, which
// templates share.
func claimSpecCases() map[string]resourcev1.ResourceClaimSpec {
	out := map[string]resourcev1.ResourceClaimSpec{}
	spec := func(name string, base resourcev1.ResourceClaimSpec, f func(*resourcev1.DeviceClaim)) {
		f(&base.Devices)
		out[name] = base
	}
	badConstraints := func(d *resourcev1.DeviceClaim) {
		d.Constraints = []resourcev1.DeviceConstraint{{Requests: []string{goodName, badName}, MatchAttribute: match("missing-domain")},
			{MatchAttribute: match("")}, {}}
		d.Config = []resourcev1.DeviceClaimConfiguration{claimConfig([]string{goodName, badName})}
	}
	spec("good", validClaimSpec(), func(*resourcev1.DeviceClaim) {})
	spec("bad-classname", validClaimSpec(), func(d *resourcev1.DeviceClaim) { d.Requests[0].Exactly.DeviceClassName = badName })
	spec("missing-classname", validClaimSpec(), func(d *resourcev1.DeviceClaim) { d.Requests[0].Exactly.DeviceClassName = "" })
	spec("invalid-spec", validClaimSpec(), badConstraints)
	spec("invalid-request-with-max-size", validClaimSpec(), func(d *resourcev1.DeviceClaim) {
		badConstraints(d)
		for len(d.Constraints) <= resourcev1.DeviceConstraintsMaxSize {
			d.Constraints = append(d.Constraints, resourcev1.DeviceConstraint{MatchAttribute: match("foo/bar")})
		}
		for len(d.Config) <= resourcev1.DeviceConfigMaxSize {
			d.Config = append(d.Config, claimConfig(nil))
		}
		for i := len(d.Requests); i <= resourcev1.DeviceRequestsMaxSize; i++ {
			r := *d.Requests[0].DeepCopy()
			r.Name += fmt.Sprint(i)
			d.Requests = append(d.Requests, r)
		}
	})
	spec("valid-request-at-max-size", validClaimSpec(), func(d *resourcev1.DeviceClaim) {
		for len(d.Constraints) < resourcev1.DeviceConstraintsMaxSize {
			d.Constraints = append(d.Constraints, resourcev1.DeviceConstraint{MatchAttribute: match("foo/bar")})
		}
		for len(d.Config) < resourcev1.DeviceConfigMaxSize {
			d.Config = append(d.Config, claimConfig(nil))
		}
		for i := len(d.Requests); i < resourcev1.DeviceRequestsMaxSize; i++ {
			r := *d.Requests[0].DeepCopy()
			r.Name += fmt.Sprint(i)
			d.Requests = append(d.Requests, r)
		}
	})
	spec("invalid-distinct-constraint", validClaimSpec(), func(d *resourcev1.DeviceClaim) {
		d.Constraints = []resourcev1.DeviceConstraint{{Requests: []string{goodName}, DistinctAttribute: match("missing-domain")},
			{DistinctAttribute: match("")}, {}}
	})
	spec("allocation-mode", validClaimSpec(), func(d *resourcev1.DeviceClaim) {
		add := func(name string, mode resourcev1.DeviceAllocationMode, count int64) {
			r := *d.Requests[0].DeepCopy()
			r.Name, r.Exactly.AllocationMode, r.Exactly.Count = name, mode, count
			d.Requests = append(d.Requests, r)
		}
		add("foo2", resourcev1.DeviceAllocationModeAll, 0)
		add("foo3", resourcev1.DeviceAllocationModeExactCount, -1)
		add("foo4", "other", 1)
		add("foo5", resourcev1.DeviceAllocationModeAll, 2)
		add("foo", resourcev1.DeviceAllocationModeExactCount, 1)
	})
	spec("configuration", validClaimSpec(), func(d *resourcev1.DeviceClaim) {
		for _, raw := range []string{``, `{`, `"hello-world"`, `null`, sizedParams(resourcev1.OpaqueParametersMaxLength),
			sizedParams(resourcev1.OpaqueParametersMaxLength + 1)} {
			d.Config = append(d.Config, resourcev1.DeviceClaimConfiguration{DeviceConfiguration: opaque("dra.example.com", raw)})
		}
	})
	spec("CEL-compile-errors", validClaimSpec(), func(d *resourcev1.DeviceClaim) {
		r := *d.Requests[0].DeepCopy()
		r.Name += "-2"
		r.Exactly.Selectors = []resourcev1.DeviceSelector{selector(`device.driver == "dra.example.com"`), selector(`device.attributes[true].someBoolean`)}
		d.Requests = append(d.Requests, r)
	})
	spec("CEL-length", validClaimSpec(), func(d *resourcev1.DeviceClaim) {
		expr := `device.driver == ""`
		long := func(n int) string { return strings.ReplaceAll(expr, `""`, `"`+strings.Repeat("x", n)+`"`) }
		r := *d.Requests[0].DeepCopy()
		r.Name += "-2"
		r.Exactly.Selectors = []resourcev1.DeviceSelector{selector(long(resourcev1.CELSelectorExpressionMaxLength - len(expr))),
			selector(long(resourcev1.CELSelectorExpressionMaxLength - len(expr) + 1))}
		d.Requests = append(d.Requests, r)
	})
	spec("CEL-cost", validClaimSpec(), func(d *resourcev1.DeviceClaim) {
		d.Requests[0].Exactly.Selectors = []resourcev1.DeviceSelector{selector(costlyExpression)}
	})
	spec("CEL-capacity", validClaimSpec(), func(d *resourcev1.DeviceClaim) {
		d.Requests[0].Exactly.Selectors = []resourcev1.DeviceSelector{selector(`device.allowMultipleAllocations == true`)}
	})
	spec("derived-attributes-dropped", validClaimSpec(), func(d *resourcev1.DeviceClaim) {
		d.Requests[0].Exactly.DerivedAttributes = []resourcev1.DeviceDerivedAttribute{{Name: "bad", Expression: "noSuchVar"}}
	})
	spec("prioritized-list-valid", firstAvailableSpec(), func(*resourcev1.DeviceClaim) {})
	spec("prioritized-list-both-set", firstAvailableSpec(), func(d *resourcev1.DeviceClaim) {
		d.Requests[0].Exactly = &resourcev1.ExactDeviceRequest{DeviceClassName: goodName, Selectors: []resourcev1.DeviceSelector{
			selector(`device.driver == "dra.example.com"`)}, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2, AdminAccess: ptr.To(true)}
	})
	spec("first-available-with-zero-exactly", firstAvailableSpec(), func(d *resourcev1.DeviceClaim) { d.Requests[0].Exactly = &resourcev1.ExactDeviceRequest{} })
	spec("prioritized-list-invalid-nested-request", firstAvailableSpec(), func(d *resourcev1.DeviceClaim) {
		d.Requests[0].FirstAvailable[0] = resourcev1.DeviceSubRequest{Name: badName}
	})
	spec("prioritized-list-nested-requests-same-name", firstAvailableSpec(), func(d *resourcev1.DeviceClaim) {
		d.Requests[0].FirstAvailable[1].Name = goodName
	})
	spec("prioritized-list-too-many-subrequests", validClaimSpec(), func(d *resourcev1.DeviceClaim) {
		d.Requests[0].Exactly = nil
		for i := range 9 {
			d.Requests[0].FirstAvailable = append(d.Requests[0].FirstAvailable, resourcev1.DeviceSubRequest{Name: fmt.Sprintf("subreq-%d", i),
				DeviceClassName: goodName, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1})
		}
	})
	for _, ref := range []string{"foo/bar", "foo", "foo/baz", "foo/bar/baz", badName + "/&^%$"} {
		spec("config-request-"+ref, firstAvailableSpec(), func(d *resourcev1.DeviceClaim) {
			d.Config = []resourcev1.DeviceClaimConfiguration{claimConfig([]string{ref})}
		})
		spec("constraint-request-"+ref, firstAvailableSpec(), func(d *resourcev1.DeviceClaim) {
			d.Constraints = []resourcev1.DeviceConstraint{{Requests: []string{ref}, MatchAttribute: match("dra.example.com/driverVersion")}}
		})
	}
	spec("tolerations", firstAvailableSpec(), func(d *resourcev1.DeviceClaim) {
		d.Requests[0].FirstAvailable[0].Tolerations = []resourcev1.DeviceToleration{{}}
		r := *validClaimSpec().Devices.Requests[0].DeepCopy()
		r.Name += "-other"
		r.Exactly.Tolerations = []resourcev1.DeviceToleration{{Operator: resourcev1.DeviceTolerationOpExists},
			{Key: "example.com/taint", Operator: resourcev1.DeviceTolerationOpExists, Effect: resourcev1.DeviceTaintEffectNoExecute},
			{Key: "example.com/taint", Operator: resourcev1.DeviceTolerationOpEqual, Value: "tainted", Effect: resourcev1.DeviceTaintEffectNoSchedule},
			{}, {Key: goodName, Operator: "some-other-op"}, {Key: badName, Operator: resourcev1.DeviceTolerationOpEqual, Value: badName, Effect: "some-other-effect"},
			{Key: goodName, Operator: resourcev1.DeviceTolerationOpExists, Value: "v"}}
		d.Requests = append(d.Requests, r)
	})
	spec("admin-access", validClaimSpec(), func(d *resourcev1.DeviceClaim) { d.Requests[0].Exactly.AdminAccess = ptr.To(true) })
	spec("capacity-and-distinct", validClaimSpec(), func(d *resourcev1.DeviceClaim) {
		d.Requests[0].Exactly.Capacity = &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{"memory": resource.MustParse("1Gi")}}
		d.Constraints = []resourcev1.DeviceConstraint{{DistinctAttribute: match("dra.example.com/x")}}
	})
	return out
}

func claimCases() map[string]*resourcev1.ResourceClaim {
	out := map[string]*resourcev1.ResourceClaim{}
	for name, change := range metaVariants() {
		c := validClaim()
		change(&c.ObjectMeta)
		out["meta "+name] = c
	}
	for name, s := range claimSpecCases() {
		c := validClaim()
		c.Spec = s
		out[name] = c
	}
	return out
}

func templateCases() map[string]*resourcev1.ResourceClaimTemplate {
	out := map[string]*resourcev1.ResourceClaimTemplate{}
	tmpl := func() *resourcev1.ResourceClaimTemplate {
		return &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: goodName, Namespace: adminNamespace},
			Spec: resourcev1.ResourceClaimTemplateSpec{Spec: validClaimSpec()}}
	}
	for name, change := range metaVariants() {
		t := tmpl()
		change(&t.ObjectMeta)
		out["meta "+name] = t
		inner := tmpl()
		change(&inner.Spec.ObjectMeta)
		out["claim meta "+name] = inner
	}
	for name, s := range claimSpecCases() {
		t := tmpl()
		t.Spec.Spec = s
		out[name] = t
	}
	return out
}

func validAllocation() *resourcev1.AllocationResult {
	return &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{
		Request: goodName, Driver: goodName, Pool: goodName, Device: goodName, AdminAccess: ptr.To(false)}}}}
}

func reservations(n int, sameUID bool) []resourcev1.ResourceClaimConsumerReference {
	var out []resourcev1.ResourceClaimConsumerReference
	for i := range n {
		uid := types.UID(fmt.Sprint(i))
		if sameUID {
			uid = "1"
		}
		out = append(out, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: fmt.Sprintf("foo-%d", i), UID: uid})
	}
	return out
}

// claimStatusCases are TestValidateClaimStatusUpdate's scenarios: a stored
// claim and the status written over it.
func claimStatusCases() map[string][2]*resourcev1.ResourceClaim {
	out := map[string][2]*resourcev1.ResourceClaim{}
	allocated := validClaim()
	allocated.Status.Allocation = validAllocation()
	status := func(name string, old *resourcev1.ResourceClaim, f func(*resourcev1.ResourceClaimStatus)) {
		c := old.DeepCopy()
		f(&c.Status)
		out[name] = [2]*resourcev1.ResourceClaim{c, old}
	}
	status("valid-no-op", validClaim(), func(*resourcev1.ResourceClaimStatus) {})
	status("add-allocation-empty", validClaim(), func(s *resourcev1.ResourceClaimStatus) { s.Allocation = &resourcev1.AllocationResult{} })
	status("add-allocation", validClaim(), func(s *resourcev1.ResourceClaimStatus) { s.Allocation = validAllocation() })
	status("add-allocation-bad-request", validClaim(), func(s *resourcev1.ResourceClaimStatus) {
		s.Allocation = validAllocation()
		s.Allocation.Devices.Results[0].Request = badName
	})
	status("add-allocation-missing-admin-access", validClaim(), func(s *resourcev1.ResourceClaimStatus) {
		s.Allocation = validAllocation()
		s.Allocation.Devices.Results[0].AdminAccess = nil
	})
	status("add-allocation-admin-access", validClaim(), func(s *resourcev1.ResourceClaimStatus) {
		s.Allocation = validAllocation()
		s.Allocation.Devices.Results[0].AdminAccess = ptr.To(true)
	})
	status("invalid-node-selector", validClaim(), func(s *resourcev1.ResourceClaimStatus) {
		s.Allocation = &resourcev1.AllocationResult{NodeSelector: &corev1.NodeSelector{}}
	})
	status("bad-node-selector-terms", validClaim(), func(s *resourcev1.ResourceClaimStatus) {
		s.Allocation = &resourcev1.AllocationResult{NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "bad key", Operator: "Foo", Values: []string{badValue}}, {Key: "k", Operator: "In"}},
			MatchFields:      []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: "In", Values: []string{"Bad_Node", "b"}}, {Key: "spec.x", Operator: "Exists"}}}}}}
	})
	status("add-reservation", allocated, func(s *resourcev1.ResourceClaimStatus) {
		s.ReservedFor = reservations(resourcev1.ResourceClaimReservedForMaxSize, false)
	})
	status("add-reservation-and-allocation", validClaim(), func(s *resourcev1.ResourceClaimStatus) {
		s.Allocation, s.ReservedFor = validAllocation(), reservations(resourcev1.ResourceClaimReservedForMaxSize, false)
	})
	status("reserved-for-too-large", allocated, func(s *resourcev1.ResourceClaimStatus) {
		s.ReservedFor = reservations(resourcev1.ResourceClaimReservedForMaxSize+1, false)
	})
	status("reserved-for-duplicate", allocated, func(s *resourcev1.ResourceClaimStatus) { s.ReservedFor = reservations(2, true) })
	status("reserved-for-no-allocation", validClaim(), func(s *resourcev1.ResourceClaimStatus) { s.ReservedFor = reservations(1, false) })
	status("reserved-for-empty", allocated, func(s *resourcev1.ResourceClaimStatus) {
		s.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{}}
	})
	deleted := allocated.DeepCopy()
	deleted.DeletionTimestamp = &metav1.Time{}
	status("reserved-deleted", deleted, func(s *resourcev1.ResourceClaimStatus) { s.ReservedFor = reservations(1, false) })
	status("allocation-modification", allocated, func(s *resourcev1.ResourceClaimStatus) { s.Allocation.Devices.Results[0].Driver += "-2" })
	status("allocation-config", validClaim(), func(s *resourcev1.ResourceClaimStatus) {
		s.Allocation = validAllocation()
		s.Allocation.Devices.Config = []resourcev1.DeviceAllocationConfiguration{
			{Source: resourcev1.AllocationConfigSourceClaim, Requests: []string{goodName, badName}, DeviceConfiguration: opaque("dra.example.com", `{}`)},
			{Source: "", DeviceConfiguration: opaque("", `null`)}, {Source: "Other", Requests: []string{goodName, goodName}}}
	})
	status("bad-results", validClaim(), func(s *resourcev1.ResourceClaimStatus) {
		s.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
			{Request: "foo/bar/baz", Driver: "", Pool: "", Device: badName, ShareID: ptr.To(types.UID("a")),
				Tolerations: []resourcev1.DeviceToleration{{Operator: "x"}}, BindingConditions: []string{"a", "a", "bad key"},
				BindingFailureConditions: []string{"a"}},
			{Request: goodName, Driver: strings.Repeat("d", 64), Pool: "a/" + badName, Device: goodName, ShareID: ptr.To(types.UID("Aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa")),
				BindingConditions: []string{"a", "b", "c", "d", "e"}, BindingFailureConditions: []string{"x"}},
			{Request: goodName, Driver: "Upper.Case", Pool: goodName, Device: goodName, BindingFailureConditions: []string{"y"}}}}}
	})
	devStatus := func(name string, old *resourcev1.ResourceClaim, devices ...resourcev1.AllocatedDeviceStatus) {
		status(name, old, func(s *resourcev1.ResourceClaimStatus) { s.Devices = devices })
	}
	dev := func(share *string) resourcev1.AllocatedDeviceStatus {
		return resourcev1.AllocatedDeviceStatus{Driver: goodName, Pool: goodName, Device: goodName, ShareID: share}
	}
	devStatus("device-status-valid", allocated, resourcev1.AllocatedDeviceStatus{Driver: goodName, Pool: goodName, Device: goodName,
		Conditions:  []metav1.Condition{{Type: "test-0", Status: metav1.ConditionTrue, Reason: "test_reason", LastTransitionTime: metav1.Now().Rfc3339Copy()}},
		Data:        &runtime.RawExtension{Raw: []byte(`{"field1": true}`)},
		NetworkData: &resourcev1.NetworkDeviceData{InterfaceName: "net-1", IPs: []string{"10.9.8.0/24", "2001:db8::/64"}, HardwareAddress: "ea:9f:cb:40:b1:7b"}})
	devStatus("device-status-duplicate", allocated, dev(nil), dev(nil))
	devStatus("device-status-duplicate-share", allocated, dev(ptr.To(goodShare)), dev(ptr.To(goodShare)))
	devStatus("device-status-empty-share", allocated, dev(ptr.To("")), dev(nil))
	devStatus("device-status-bad-share", allocated, dev(ptr.To("a")))
	devStatus("device-status-not-allocated", allocated, resourcev1.AllocatedDeviceStatus{Driver: "other", Pool: goodName, Device: "x"})
	devStatus("device-status-invalid", allocated, resourcev1.AllocatedDeviceStatus{Driver: goodName, Pool: goodName, Device: goodName,
		Conditions: []metav1.Condition{{Type: "test-0"}, {Type: "test-0", Status: "Bad"}},
		Data:       &runtime.RawExtension{Raw: []byte(`"x"`)},
		NetworkData: &resourcev1.NetworkDeviceData{InterfaceName: strings.Repeat("x", 257), IPs: []string{"300.9.8.0/24", "010.009.008.000/24", "1.2.3.4/8", "1.2.3.4/8"},
			HardwareAddress: strings.Repeat("x", 129)}})
	devStatus("device-status-limits", allocated, resourcev1.AllocatedDeviceStatus{Driver: goodName, Pool: goodName, Device: goodName,
		Conditions: make([]metav1.Condition, 9), Data: &runtime.RawExtension{Raw: []byte(sizedParams(resourcev1.AllocatedDeviceStatusDataMaxLength + 1))},
		NetworkData: &resourcev1.NetworkDeviceData{IPs: strings.Split(strings.Repeat("1.2.3.4/8,", 17), ",")[:17]}})
	devStatus("device-status-multibyte", allocated, resourcev1.AllocatedDeviceStatus{Driver: goodName, Pool: goodName, Device: goodName,
		NetworkData: &resourcev1.NetworkDeviceData{InterfaceName: strings.Repeat("ä", 129), HardwareAddress: strings.Repeat("ä", 65)}})
	devStatus("device-status-no-device", validClaim(), dev(nil))
	multi := validClaim()
	multi.Status.Allocation = validAllocation()
	multi.Status.Allocation.Devices.Results = append(multi.Status.Allocation.Devices.Results, multi.Status.Allocation.Devices.Results[0])
	multi.Status.Allocation.Devices.Results[0].ShareID = ptr.To(types.UID(goodShare))
	multi.Status.Allocation.Devices.Results[0].ConsumedCapacity = map[resourcev1.QualifiedName]resource.Quantity{"memory": resource.MustParse("1Gi")}
	devStatus("device-status-share-ids", multi, dev(ptr.To(goodShare)), dev(nil), dev(ptr.To("bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb")))
	status("dealloc-drops-device-status", func() *resourcev1.ResourceClaim {
		c := allocated.DeepCopy()
		c.Status.Devices = []resourcev1.AllocatedDeviceStatus{dev(nil)}
		return c
	}(), func(s *resourcev1.ResourceClaimStatus) { s.Allocation = nil })
	status("sub-request-results", func() *resourcev1.ResourceClaim {
		c := validClaim()
		c.Spec = firstAvailableSpec()
		return c
	}(), func(s *resourcev1.ResourceClaimStatus) {
		s.Allocation = validAllocation()
		s.Allocation.Devices.Results[0].Request = "foo/bar"
		s.Allocation.Devices.Results = append(s.Allocation.Devices.Results, s.Allocation.Devices.Results[0], s.Allocation.Devices.Results[0])
		s.Allocation.Devices.Results[1].Request = "foo/baz"
		s.Allocation.Devices.Results[2].Request = "foo/&^%$"
	})
	status("skip-node-operations", validClaim(), func(s *resourcev1.ResourceClaimStatus) {
		s.Allocation = validAllocation()
		s.Allocation.Devices.Results[0].SkipNodeOperations = []resourcev1.SkipNodeOperation{"NodePrepareResources"}
	})
	return out
}

func TestUpstreamTables(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	both := func(name string, obj runtime.Object) {
		for _, defaulted := range []bool{false, true} {
			compare(t, cat, write{Name: fmt.Sprintf("%s (defaulted %v)", name, defaulted), Obj: obj, Defaulted: defaulted}, &c)
		}
	}
	for name, o := range classCases() {
		both("class "+name, o)
	}
	for name, o := range taintRuleCases() {
		both("taint rule "+name, o)
	}
	for name, o := range claimCases() {
		both("claim "+name, o)
	}
	for name, o := range templateCases() {
		both("template "+name, o)
	}
	for name, o := range sliceCases() {
		both("slice "+name, o)
	}
	tableUpdates(t, cat, &c)
	t.Log(c.String())
	if c.Mismatches > 0 || c.Refused == 0 || c.Accepted == 0 {
		t.Errorf("tally: %s", c.String())
	}
}
