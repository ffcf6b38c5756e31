package registry

// Cases mirror upstream kubernetes/kubernetes
// pkg/apis/admissionregistration/validation/validation_test.go
// (TestValidateValidatingAdmissionPolicy, ...Update, ...Binding) where the
// stored copy has them; the wording of the variable, message and
// matchResources errors follows the newer upstream (see
// pkg/apis/admissionregistration/policies.go). Whole aggregates are compared after defaulting.

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// vap is a valid policy changed by edits.
func vap(edits ...func(*v1.ValidatingAdmissionPolicySpec)) *v1.ValidatingAdmissionPolicy {
	p := &v1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "config"}, Spec: v1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &v1.MatchResources{ResourceRules: []v1.NamedRuleWithOperations{namedRule(create, "a")}},
		Validations:      []v1.Validation{{Expression: "object.x < 100"}},
	}}
	for _, e := range edits {
		e(&p.Spec)
	}
	return p
}

func namedRule(ops []v1.OperationType, resources ...string) v1.NamedRuleWithOperations {
	return v1.NamedRuleWithOperations{RuleWithOperations: v1.RuleWithOperations{Operations: ops,
		Rule: v1.Rule{APIGroups: []string{"a"}, APIVersions: []string{"a"}, Resources: resources}}}
}

func validations(v ...v1.Validation) func(*v1.ValidatingAdmissionPolicySpec) {
	return func(s *v1.ValidatingAdmissionPolicySpec) { s.Validations = v }
}

func variables(v ...v1.Variable) func(*v1.ValidatingAdmissionPolicySpec) {
	return func(s *v1.ValidatingAdmissionPolicySpec) { s.Variables = v }
}

func audits(a ...v1.AuditAnnotation) func(*v1.ValidatingAdmissionPolicySpec) {
	return func(s *v1.ValidatingAdmissionPolicySpec) { s.AuditAnnotations = a }
}

func paramKind(apiVersion, kind string) func(*v1.ValidatingAdmissionPolicySpec) {
	return func(s *v1.ValidatingAdmissionPolicySpec) {
		s.ParamKind = &v1.ParamKind{APIVersion: apiVersion, Kind: kind}
	}
}

// compileErr is how a CEL compile error with one issue prints.
func compileErr(path, expr string, col int, msg string) string {
	lines := strings.Split(expr, "\n")
	return fmt.Sprintf("%s: Invalid value: %q: compilation failed: ERROR: <input>:1:%d: %s\n | %s\n | %s^",
		path, expr, col, msg, lines[0], strings.Repeat(".", col-1))
}

type vapCase struct {
	name string
	obj  *v1.ValidatingAdmissionPolicy
	want string
}

func runVAPCases(t *testing.T, cases []vapCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.obj)); got != tc.want {
				t.Errorf("create errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestValidateValidatingAdmissionPolicy(t *testing.T) {
	dns1035 := func(s string) string { return strings.Join(utilvalidation.IsDNS1035Label(s), ",") }
	runVAPCases(t, []vapCase{
		{"valid", vap(), ""},
		{"metadata.name validation", func() *v1.ValidatingAdmissionPolicy { p := vap(); p.Name = "!!!!"; return p }(),
			`metadata.name: Invalid value: "!!!!": ` + utilvalidation.IsDNS1123Subdomain("!!!!")[0]},
		{"failure policy validation", vap(func(s *v1.ValidatingAdmissionPolicySpec) { s.FailurePolicy = ptr.To(v1.FailurePolicyType("other")) }),
			`spec.failurePolicy: Unsupported value: "other": supported values: "Fail", "Ignore"`},
		{"API version needs a version", vap(paramKind("test.example.com", "Example")),
			`spec.paramKind.apiVersion: Invalid value: "test.example.com": ` + dns1035("test.example.com")},
		{"API kind is required in ParamKind", vap(paramKind("test.example.com/v1", "")), `spec.paramKind.kind: Required value`},
		{"API version format in ParamKind", vap(paramKind("test.example.com/!!!", "Example")),
			`spec.paramKind.apiVersion: Invalid value: "!!!": ` + dns1035("!!!")},
		{"API group format in ParamKind", vap(paramKind("!!!/v1", "ReplicaLimit")),
			`spec.paramKind.apiVersion: Invalid value: "!!!": ` + strings.Join(utilvalidation.IsDNS1123Subdomain("!!!"), ",")},
		{"too many slashes", vap(paramKind("a/b/c", "K")), `spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`},
		{"group without version", vap(paramKind("a/", "K")), `spec.paramKind.apiVersion: Invalid value: "a/": version must be specified`},
		{"kind may have mixed case only", vap(paramKind("v1", "Bad_Kind")),
			`spec.paramKind.kind: Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: ` + dns1035("bad_kind")},
		{"validations is required", &v1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "config"}},
			`[spec.matchConstraints: Required value, ` +
				`spec.validations: Required value: validations or auditAnnotations must contain at least one item, ` +
				`spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item]`},
		{"invalid validations reason", vap(validations(v1.Validation{Expression: "true", Reason: ptr.To(metav1.StatusReason("other"))})),
			`spec.validations[0].reason: Unsupported value: "other": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"`},
		{"matchConstraints.resourceRules is required", vap(func(s *v1.ValidatingAdmissionPolicySpec) { s.MatchConstraints = &v1.MatchResources{} }),
			`spec.matchConstraints.resourceRules: Required value`},
		{"an empty rule with a bad resource name", vap(func(s *v1.ValidatingAdmissionPolicySpec) {
			s.MatchConstraints.ResourceRules = []v1.NamedRuleWithOperations{{ResourceNames: []string{"/./."}}}
		}), `[spec.matchConstraints.resourceRules[0].resourceNames[0]: Invalid value: "/./.": may not contain '/', ` +
			`spec.matchConstraints.resourceRules[0].operations: Required value, spec.matchConstraints.resourceRules[0].apiGroups: Required value, ` +
			`spec.matchConstraints.resourceRules[0].apiVersions: Required value, spec.matchConstraints.resourceRules[0].resources: Required value]`},
		{"resourceNames cannot duplicate", vap(func(s *v1.ValidatingAdmissionPolicySpec) {
			s.MatchConstraints.ResourceRules[0].ResourceNames = []string{"test", "test"}
		}), `spec.matchConstraints.resourceRules[0].resourceNames[1]: Duplicate value: "test"`},
		{"matchPolicy values", vap(func(s *v1.ValidatingAdmissionPolicySpec) {
			s.MatchConstraints.MatchPolicy = ptr.To(v1.MatchPolicyType("other"))
		}),
			`spec.matchConstraints.matchPolicy: Unsupported value: "other": supported values: "Equivalent", "Exact"`},
		{"exclude rules are checked too", vap(func(s *v1.ValidatingAdmissionPolicySpec) {
			s.MatchConstraints.ExcludeResourceRules = []v1.NamedRuleWithOperations{namedRule(nil, "*/*", "a")}
		}), `[spec.matchConstraints.excludeResourceRules[0].operations: Required value, ` +
			`spec.matchConstraints.excludeResourceRules[0].resources: Invalid value: ["*/*","a"]: if '*/*' is present, must not specify other resources]`},
	})
}

func TestValidateValidatingAdmissionPolicyExpressions(t *testing.T) {
	tooMany := make([]v1.AuditAnnotation, 21)
	for i := range tooMany {
		tooMany[i] = v1.AuditAnnotation{Key: fmt.Sprintf("k%d", i), ValueExpression: "'v'"}
	}
	runVAPCases(t, []vapCase{
		{"expression is required", vap(validations(v1.Validation{})),
			`spec.validations[0].expression: Required value: expression is not specified`},
		{"invalid expression", vap(validations(v1.Validation{Expression: "object.x in [1, 2, "})),
			compileErr("spec.validations[0].expression", "object.x in [1, 2, ", 20, "Syntax error: missing ']' at '<EOF>'")},
		{"expression must be bool", vap(validations(v1.Validation{Expression: "'x'"})),
			`spec.validations[0].expression: Invalid value: "'x'": must evaluate to bool but got string`},
		{"invalid messageExpression", vap(validations(v1.Validation{Expression: "true", MessageExpression: "object.x in [1, 2, "})),
			compileErr("spec.validations[0].messageExpression", "object.x in [1, 2, ", 20, "Syntax error: missing ']' at '<EOF>'")},
		{"messageExpression of wrong type", vap(validations(v1.Validation{Expression: "true", MessageExpression: "0 == 0"})),
			`spec.validations[0].messageExpression: Invalid value: "0 == 0": must evaluate to string but got bool`},
		{"messageExpression has no authorizer", vap(validations(v1.Validation{Expression: "true", MessageExpression: "authorizer.path('/').check('get').reason()"})),
			compileErr("spec.validations[0].messageExpression", "authorizer.path('/').check('get').reason()", 1, "undeclared reference to 'authorizer' (in container '')")},
		{"blank message and messageExpression", vap(validations(v1.Validation{Expression: "true", Message: " ", MessageExpression: " "})),
			`[spec.validations[0].messageExpression: Invalid value: " ": must be non-empty if specified, ` +
				`spec.validations[0].message: Invalid value: " ": must be non-empty if specified]`},
		{"message with a line break", vap(validations(v1.Validation{Expression: "true", Message: "a\nb"})),
			`spec.validations[0].message: Invalid value: "a\nb": must not contain line breaks`},
		{"invalid auditAnnotations key due to key name", vap(audits(v1.AuditAnnotation{Key: "@", ValueExpression: "'value'"})),
			`spec.auditAnnotations[0].key: Invalid value: "config/@": ` + qualifiedNameMsg},
		{"auditAnnotations keys must be unique", vap(audits(v1.AuditAnnotation{Key: "a", ValueExpression: "'1'"}, v1.AuditAnnotation{Key: "a", ValueExpression: "'2'"})),
			`spec.auditAnnotations[1].key: Duplicate value: "a"`},
		{"invalid auditAnnotations valueExpression type", vap(audits(v1.AuditAnnotation{Key: "something", ValueExpression: "true"})),
			`spec.auditAnnotations[0].valueExpression: Invalid value: "true": must evaluate to one of [string null_type] but got bool`},
		{"auditAnnotations compile trimmed, show as written", vap(audits(v1.AuditAnnotation{Key: "something", ValueExpression: "object.x in [1, 2, "})),
			"spec.auditAnnotations[0].valueExpression: Invalid value: \"object.x in [1, 2, \": compilation failed: ERROR: <input>:1:19: Syntax error: missing ']' at '<EOF>'\n | object.x in [1, 2,\n | ..................^"},
		{"valueExpression is required", vap(audits(v1.AuditAnnotation{Key: "k"})),
			`spec.auditAnnotations[0].valueExpression: Required value: valueExpression is not specified`},
		{"valueExpression length", vap(audits(v1.AuditAnnotation{Key: "k", ValueExpression: "'" + strings.Repeat("x", 5120) + "'"})),
			`spec.auditAnnotations[0].valueExpression: Required value: must not exceed 5120 bytes in length`},
		{"at most 20 auditAnnotations", vap(validations(), audits(tooMany...)),
			numberKeys(`spec.auditAnnotations: Invalid value: [` + strings.TrimSuffix(strings.Repeat(`{"Key":"kN","ValueExpression":"'v'"},`, 21), ",") + `]: must not have more than 20 auditAnnotations`)},
	})
}

func TestValidateValidatingAdmissionPolicyConditionsAndVariables(t *testing.T) {
	runVAPCases(t, []vapCase{
		{"match condition must have a name", vap(func(s *v1.ValidatingAdmissionPolicySpec) { s.MatchConditions = []v1.MatchCondition{cond("", "true")} }),
			`spec.matchConditions[0].name: Required value`},
		{"match condition with params allowed", vap(paramKind("foobar/v1alpha1", "Foo"), func(s *v1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions = []v1.MatchCondition{cond("hasParams", `params.foo == "okay"`)}
		}), ""},
		{"match condition with params not allowed without paramKind", vap(func(s *v1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions = []v1.MatchCondition{cond("hasParams", `params.foo == "okay"`)}
		}), compileErr("spec.matchConditions[0].expression", `params.foo == "okay"`, 1, "undeclared reference to 'params' (in container '')")},
		{"match conditions do not see variables", vap(variables(v1.Variable{Name: "x", Expression: "true"}), func(s *v1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions = []v1.MatchCondition{cond("v", "variables.x")}
		}), compileErr("spec.matchConditions[0].expression", "variables.x", 1, "undeclared reference to 'variables' (in container '')")},
		{"variable names", vap(variables(v1.Variable{Name: "4ever", Expression: "true"}, v1.Variable{Name: "in", Expression: "true"},
			v1.Variable{Name: " ", Expression: " "})),
			`[spec.variables[0].name: Invalid value: "4ever": must be a valid CEL identifier, ` +
				`spec.variables[1].name: Invalid value: "in": must be a valid CEL identifier, ` +
				`spec.variables[2].name: Required value: name is not specified, spec.variables[2].expression: Required value: expression is not specified]`},
		{"variable composition cannot compile", vap(variables(v1.Variable{Name: "foo", Expression: "114 + '514'"})),
			compileErr("spec.variables[0].expression", "114 + '514'", 5, "found no matching overload for '_+_' applied to '(int, string)'")},
		{"variables are typed", vap(variables(v1.Variable{Name: "n", Expression: "1"}, v1.Variable{Name: "big", Expression: "variables.n > 0"}),
			validations(v1.Validation{Expression: "variables.big"}, v1.Validation{Expression: "variables.n"})),
			`spec.validations[1].expression: Invalid value: "variables.n": must evaluate to bool but got int`},
		{"variables see only earlier variables", vap(variables(v1.Variable{Name: "a", Expression: "variables.b"}, v1.Variable{Name: "b", Expression: "true"})),
			compileErr("spec.variables[0].expression", "variables.b", 10, "undefined field 'b'")},
		{"variables undeclared without variables", vap(validations(v1.Validation{Expression: "variables.x"})),
			compileErr("spec.validations[0].expression", "variables.x", 1, "undeclared reference to 'variables' (in container '')")},
		{"static suffix is reserved", func() *v1.ValidatingAdmissionPolicy { p := vap(); p.Name = "p.static.k8s.io"; return p }(),
			`metadata.name: Invalid value: "p.static.k8s.io": names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API`},
	})
}

// numberKeys replaces the kN placeholders with k0, k1, ...
func numberKeys(s string) string {
	for i := 0; strings.Contains(s, `"kN"`); i++ {
		s = strings.Replace(s, `"kN"`, fmt.Sprintf(`"k%d"`, i), 1)
	}
	return s
}

func TestValidateValidatingAdmissionPolicyUpdate(t *testing.T) {
	const lists1 = "[1, 2].includes(1)" // lists v1 came in 1.37; the 1.36 environment lacks it
	withParams := func(s *v1.ValidatingAdmissionPolicySpec) {
		s.MatchConditions = []v1.MatchCondition{cond("hasParams", `params.foo == "okay"`)}
	}
	everywhere := func(e string) func(*v1.ValidatingAdmissionPolicySpec) {
		return func(s *v1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions = []v1.MatchCondition{cond("c", e)}
			s.Validations = []v1.Validation{{Expression: e, MessageExpression: "string(" + e + ")"}}
			s.AuditAnnotations = []v1.AuditAnnotation{{Key: "k", ValueExpression: "string(" + e + ")"}}
		}
	}
	cases := []struct {
		name     string
		old, obj *v1.ValidatingAdmissionPolicy
		want     string
	}{
		{"valid update of an invalid old policy", &v1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "config"}}, vap(), ""},
		{"match conditions re-checked if paramKind changes", vap(paramKind("foobar/v1alpha1", "Foo"), withParams), vap(withParams),
			compileErr("spec.matchConditions[0].expression", `params.foo == "okay"`, 1, "undeclared reference to 'params' (in container '')")},
		{"match conditions not re-checked if paramKind and matchConditions are unchanged", vap(withParams),
			vap(withParams, func(s *v1.ValidatingAdmissionPolicySpec) { s.FailurePolicy = ptr.To(v1.Ignore) }), ""},
		{"unchanged expressions compile in the lists1 environment", vap(everywhere(lists1)), vap(everywhere(lists1)), ""},
		{"changed matchCondition compiles in the new environment", vap(), vap(func(s *v1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions = []v1.MatchCondition{cond("c", lists1)}
		}), compileErr("spec.matchConditions[0].expression", lists1, 16, "undeclared reference to 'includes' (in container '')")},
		{"changed validation compiles in the new environment", vap(), vap(validations(v1.Validation{Expression: lists1})),
			compileErr("spec.validations[0].expression", lists1, 16, "undeclared reference to 'includes' (in container '')")},
		{"changed messageExpression compiles in the new environment", vap(), vap(validations(v1.Validation{Expression: "true", MessageExpression: "string(" + lists1 + ")"})),
			compileErr("spec.validations[0].messageExpression", "string("+lists1+")", 23, "undeclared reference to 'includes' (in container '')")},
		{"changed auditAnnotation compiles in the new environment", vap(), vap(audits(v1.AuditAnnotation{Key: "k", ValueExpression: "string(" + lists1 + ")"})),
			compileErr("spec.auditAnnotations[0].valueExpression", "string("+lists1+")", 23, "undeclared reference to 'includes' (in container '')")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := stored(tc.old)
			if got := aggregate(updateErrors(t, stored(tc.obj), old)); got != tc.want {
				t.Errorf("update errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// vapb is a valid binding changed by edits.
func vapb(edits ...func(*v1.ValidatingAdmissionPolicyBindingSpec)) *v1.ValidatingAdmissionPolicyBinding {
	b := &v1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "config"}, Spec: v1.ValidatingAdmissionPolicyBindingSpec{
		PolicyName:        "xyzlimit-scale.example.com",
		ParamRef:          &v1.ParamRef{Name: "xyzlimit-scale-setting.example.com", ParameterNotFoundAction: ptr.To(v1.DenyAction)},
		ValidationActions: []v1.ValidationAction{v1.Deny},
	}}
	for _, e := range edits {
		e(&b.Spec)
	}
	return b
}

func TestValidateValidatingAdmissionPolicyBinding(t *testing.T) {
	actions := func(a ...v1.ValidationAction) func(*v1.ValidatingAdmissionPolicyBindingSpec) {
		return func(s *v1.ValidatingAdmissionPolicyBindingSpec) { s.ValidationActions = a }
	}
	paramRef := func(pr *v1.ParamRef) func(*v1.ValidatingAdmissionPolicyBindingSpec) {
		return func(s *v1.ValidatingAdmissionPolicyBindingSpec) { s.ParamRef = pr }
	}
	cases := []struct {
		name string
		obj  *v1.ValidatingAdmissionPolicyBinding
		want string
	}{
		{"valid", vapb(), ""},
		{"no paramRef is fine", vapb(paramRef(nil)), ""},
		{"policyName is required", &v1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "config"}},
			`[spec.policyName: Required value, spec.validationActions: Required value: at least one validation action is required]`},
		{"policyName is a DNS subdomain", vapb(func(s *v1.ValidatingAdmissionPolicyBindingSpec) { s.PolicyName = "!!!" }),
			`spec.policyName: Invalid value: "!!!": ` + utilvalidation.IsDNS1123Subdomain("!!!")[0]},
		{"matchResources matchPolicy", vapb(func(s *v1.ValidatingAdmissionPolicyBindingSpec) {
			s.MatchResources = &v1.MatchResources{MatchPolicy: ptr.To(v1.MatchPolicyType("other"))}
		}), `spec.matchResources.matchPolicy: Unsupported value: "other": supported values: "Equivalent", "Exact"`},
		{"matchResources may have no rules but checks those it has", vapb(func(s *v1.ValidatingAdmissionPolicyBindingSpec) {
			s.MatchResources = &v1.MatchResources{ResourceRules: []v1.NamedRuleWithOperations{namedRule([]v1.OperationType{"CREATE", "*"}, "a/*", "a/x")}}
		}), `[spec.matchResources.resourceRules[0].operations: Invalid value: ["CREATE","*"]: if '*' is present, must not specify other operations, ` +
			`spec.matchResources.resourceRules[0].resources[1]: Invalid value: "a/x": if 'a/*' is present, must not specify a/x]`},
		{"validationActions must be unique", vapb(actions(v1.Deny, v1.Deny)), `spec.validationActions[1]: Duplicate value: "Deny"`},
		{"validationActions must contain supported values", vapb(actions("illegal")),
			`spec.validationActions[0]: Unsupported value: "illegal": supported values: "Audit", "Deny", "Warn"`},
		{"Deny and Warn together", vapb(actions(v1.Deny, v1.Warn)),
			`spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)`},
		{"Deny and Audit together", vapb(actions(v1.Deny, v1.Audit)), ""},
		{"paramRef name and selector are exclusive", vapb(paramRef(&v1.ParamRef{Name: "a", Selector: &metav1.LabelSelector{}, ParameterNotFoundAction: ptr.To(v1.AllowAction)})),
			`[spec.paramRef.name: Forbidden: name and selector are mutually exclusive, spec.paramRef.selector: Forbidden: name and selector are mutually exclusive]`},
		{"paramRef needs name or selector and an action", vapb(paramRef(&v1.ParamRef{Namespace: "ns"})),
			`[spec.paramRef: Required value: one of name or selector must be specified, spec.paramRef.parameterNotFoundAction: Required value]`},
		{"paramRef action values and name", vapb(paramRef(&v1.ParamRef{Name: "a/b", ParameterNotFoundAction: ptr.To(v1.ParameterNotFoundActionType("Maybe"))})),
			`[spec.paramRef.name: Invalid value: "a/b": may not contain '/', spec.paramRef.parameterNotFoundAction: Unsupported value: "Maybe": supported values: "Deny", "Allow"]`},
		{"paramRef selector is validated", vapb(paramRef(&v1.ParamRef{Selector: badValueSelector(), ParameterNotFoundAction: ptr.To(v1.DenyAction)})),
			`spec.paramRef.selector.matchExpressions[0].values[0]: Invalid value: "-bad-": ` + utilvalidation.IsValidLabelValue("-bad-")[0]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.obj.DeepCopy())); got != tc.want {
				t.Errorf("create errors:\n got %s\nwant %s", got, tc.want)
			}
			old := stored(vapb())
			if got := aggregate(updateErrors(t, stored(tc.obj), old)); got != tc.want {
				t.Errorf("update errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
