package registry

// These cases follow upstream's TestValidateMutatingAdmissionPolicy,
// TestValidateMutatingAdmissionPolicyUpdate and
// TestValidateMutatingAdmissionPolicyBinding
// (k8s.io/kubernetes/pkg/apis/admissionregistration/validation/validation_test.go).

import (
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// mapolicy is a valid mutating policy changed by edits.
func mapolicy(edits ...func(*v1.MutatingAdmissionPolicySpec)) *v1.MutatingAdmissionPolicy {
	p := &v1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "config"}, Spec: v1.MutatingAdmissionPolicySpec{
		MatchConstraints:   &v1.MatchResources{ResourceRules: []v1.NamedRuleWithOperations{namedRule(create, "a")}},
		Mutations:          []v1.Mutation{applyConfig("Object{spec: Object.spec{replicas: 1}}")},
		ReinvocationPolicy: v1.NeverReinvocationPolicy,
	}}
	for _, e := range edits {
		e(&p.Spec)
	}
	return p
}

func applyConfig(expr string) v1.Mutation {
	return v1.Mutation{PatchType: v1.PatchTypeApplyConfiguration, ApplyConfiguration: &v1.ApplyConfiguration{Expression: expr}}
}

func jsonPatch(expr string) v1.Mutation {
	return v1.Mutation{PatchType: v1.PatchTypeJSONPatch, JSONPatch: &v1.JSONPatch{Expression: expr}}
}

func mutations(m ...v1.Mutation) func(*v1.MutatingAdmissionPolicySpec) {
	return func(s *v1.MutatingAdmissionPolicySpec) { s.Mutations = m }
}

func TestValidateMutatingAdmissionPolicy(t *testing.T) {
	const mutatingOps = `supported values: "*", "CONNECT", "CREATE", "UPDATE"`
	cases := []struct {
		name string
		obj  *v1.MutatingAdmissionPolicy
		want string
	}{
		{"valid", mapolicy(), ""},
		{"valid JSONPatch", mapolicy(mutations(jsonPatch(`[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b"), value: "x"}]`))), ""},
		{"empty spec reports every required field", &v1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "config"}},
			`[spec.matchConstraints: Required value, spec.mutations: Required value: mutations must contain at least one item, spec.reinvocationPolicy: Required value]`},
		{"failurePolicy values", mapolicy(func(s *v1.MutatingAdmissionPolicySpec) { s.FailurePolicy = ptr.To(v1.FailurePolicyType("other")) }),
			`spec.failurePolicy: Unsupported value: "other": supported values: "Fail", "Ignore"`},
		{"reinvocationPolicy values", mapolicy(func(s *v1.MutatingAdmissionPolicySpec) { s.ReinvocationPolicy = "other" }),
			`spec.reinvocationPolicy: Unsupported value: "other": supported values: "Never", "IfNeeded"`},
		{"patchType is required", mapolicy(mutations(v1.Mutation{ApplyConfiguration: &v1.ApplyConfiguration{Expression: "Object{}"}})),
			`spec.mutations[0].patchType: Required value`},
		{"patchType values", mapolicy(mutations(v1.Mutation{PatchType: "other"})),
			`spec.mutations[0].patchType: Unsupported value: "other": supported values: "ApplyConfiguration", "JSONPatch"`},
		{"JSONPatch with applyConfiguration", mapolicy(mutations(v1.Mutation{PatchType: v1.PatchTypeJSONPatch, ApplyConfiguration: &v1.ApplyConfiguration{Expression: "Object{}"}})),
			`[spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch, ` +
				`spec.mutations[0].applyConfiguration: Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch]`},
		{"ApplyConfiguration with jsonPatch", mapolicy(mutations(v1.Mutation{PatchType: v1.PatchTypeApplyConfiguration, JSONPatch: &v1.JSONPatch{Expression: "[]"}})),
			`[spec.mutations[0].applyConfiguration: Required value: must be specified when patchType is ApplyConfiguration, ` +
				`spec.mutations[0].jsonPatch: Invalid value: "{jsonPatch}": must not be specified when patchType is ApplyConfiguration]`},
		{"blank expressions", mapolicy(mutations(jsonPatch("  "), applyConfig(""))),
			`[spec.mutations[0].jsonPatch.expression: Required value, spec.mutations[1].applyConfiguration.expression: Required value]`},
		{"applyConfiguration must be an Object", mapolicy(mutations(applyConfig("1"))),
			`spec.mutations[0].applyConfiguration.expression: Invalid value: "1": must evaluate to Object but got int`},
		{"jsonPatch must be a list of JSONPatch", mapolicy(mutations(jsonPatch(" 1 "))),
			`spec.mutations[0].jsonPatch.expression: Invalid value: "1": must evaluate to list(JSONPatch) but got int`},
		{"mutation compile errors", mapolicy(mutations(applyConfig("Object{"))),
			compileErr("spec.mutations[0].applyConfiguration.expression", "Object{", 8, "Syntax error: mismatched input '<EOF>' expecting {'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}")},
		{"resourceRules are required", mapolicy(func(s *v1.MutatingAdmissionPolicySpec) { s.MatchConstraints.ResourceRules = nil }),
			`spec.matchConstraints.resourceRules: Required value`},
		{"DELETE is not mutable", mapolicy(func(s *v1.MutatingAdmissionPolicySpec) {
			s.MatchConstraints.ResourceRules = []v1.NamedRuleWithOperations{namedRule([]v1.OperationType{"DELETE"}, "a")}
		}), `spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": ` + mutatingOps},
		{"unknown operations fail both checks", mapolicy(func(s *v1.MutatingAdmissionPolicySpec) {
			s.MatchConstraints.ResourceRules = []v1.NamedRuleWithOperations{namedRule([]v1.OperationType{"PATCH"}, "a")}
		}), `[spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE", ` +
			`spec.matchConstraints.resourceRules.operations: Unsupported value: "PATCH": ` + mutatingOps + `]`},
		{"CREATE, UPDATE and CONNECT are mutable", mapolicy(func(s *v1.MutatingAdmissionPolicySpec) {
			s.MatchConstraints.ResourceRules = []v1.NamedRuleWithOperations{namedRule([]v1.OperationType{"CREATE", "UPDATE", "CONNECT"}, "a")}
		}), ""},
		{"paramKind rules are shared", mapolicy(func(s *v1.MutatingAdmissionPolicySpec) { s.ParamKind = &v1.ParamKind{APIVersion: "v1"} }),
			`spec.paramKind.kind: Required value`},
		{"matchCondition rules are shared", mapolicy(func(s *v1.MutatingAdmissionPolicySpec) { s.MatchConditions = []v1.MatchCondition{cond("", "true")} }),
			`spec.matchConditions[0].name: Required value`},
		{"params need a paramKind", mapolicy(mutations(applyConfig("Object{metadata: Object.metadata{name: params.name}}"))),
			compileErr("spec.mutations[0].applyConfiguration.expression", "Object{metadata: Object.metadata{name: params.name}}", 40, "undeclared reference to 'params' (in container '')")},
		{"variables compose into mutations", mapolicy(func(s *v1.MutatingAdmissionPolicySpec) {
			s.Variables = []v1.Variable{{Name: "n", Expression: "2"}}
		}, mutations(applyConfig("Object{spec: Object.spec{replicas: variables.n}}"))), ""},
		{"variable names", mapolicy(func(s *v1.MutatingAdmissionPolicySpec) { s.Variables = []v1.Variable{{Name: "a-b", Expression: "1"}} }),
			`spec.variables[0].name: Invalid value: "a-b": must be a valid CEL identifier`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.obj)); got != tc.want {
				t.Errorf("create errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestValidateMutatingAdmissionPolicyUpdate(t *testing.T) {
	const lists1 = "Object{spec: Object.spec{replicas: [1, 2].includes(1) ? 1 : 2}}"
	cases := []struct {
		name     string
		old, obj *v1.MutatingAdmissionPolicy
		want     string
	}{
		{"unchanged mutations compile in the stored environment", mapolicy(mutations(applyConfig(lists1))), mapolicy(mutations(applyConfig(lists1))), ""},
		{"changed mutations compile in the new environment", mapolicy(), mapolicy(mutations(applyConfig(lists1))),
			compileErr("spec.mutations[0].applyConfiguration.expression", lists1, 51, "undeclared reference to 'includes' (in container '')")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(updateErrors(t, stored(tc.obj), stored(tc.old))); got != tc.want {
				t.Errorf("update errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestValidateMutatingAdmissionPolicyBinding(t *testing.T) {
	valid := func() *v1.MutatingAdmissionPolicyBinding {
		return &v1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "config"}, Spec: v1.MutatingAdmissionPolicyBindingSpec{
			PolicyName: "p.example.com", ParamRef: &v1.ParamRef{Name: "x", ParameterNotFoundAction: ptr.To(v1.DenyAction)}}}
	}
	edit := func(f func(*v1.MutatingAdmissionPolicyBindingSpec)) *v1.MutatingAdmissionPolicyBinding {
		b := valid()
		f(&b.Spec)
		return b
	}
	cases := []struct {
		name string
		obj  *v1.MutatingAdmissionPolicyBinding
		want string
	}{
		{"valid", valid(), ""},
		{"policyName is required", edit(func(s *v1.MutatingAdmissionPolicyBindingSpec) { s.PolicyName = "" }), `spec.policyName: Required value`},
		{"paramRef rules are shared", edit(func(s *v1.MutatingAdmissionPolicyBindingSpec) { s.ParamRef.ParameterNotFoundAction = nil }),
			`spec.paramRef.parameterNotFoundAction: Required value`},
		{"matchResources exclude DELETE", edit(func(s *v1.MutatingAdmissionPolicyBindingSpec) {
			s.MatchResources = &v1.MatchResources{ResourceRules: []v1.NamedRuleWithOperations{namedRule([]v1.OperationType{"DELETE"}, "a")}}
		}), `spec.matchResources.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"`},
		{"defaulted empty matchResources is valid", edit(func(s *v1.MutatingAdmissionPolicyBindingSpec) { s.MatchResources = &v1.MatchResources{} }), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.obj)); got != tc.want {
				t.Errorf("create errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
