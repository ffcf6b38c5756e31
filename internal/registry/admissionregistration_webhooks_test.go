package registry

// Cases mirror upstream kubernetes/kubernetes
// pkg/apis/admissionregistration/validation/validation_test.go
// (TestValidateValidatingWebhookConfiguration, ...Update and the mutating
// twins). Upstream checks with strings.Contains on internal objects that
// skip defaulting; these run the full create path (defaults included) and
// compare the whole aggregate. Messages from apimachinery helpers are taken
// from those helpers, as upstream's are.

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

func vwc(hooks ...v1.ValidatingWebhook) *v1.ValidatingWebhookConfiguration {
	return &v1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "config"}, Webhooks: hooks}
}

func mwc(hooks ...v1.MutatingWebhook) *v1.MutatingWebhookConfiguration {
	return &v1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "config"}, Webhooks: hooks}
}

// vhook is a valid webhook changed by edits.
func vhook(edits ...func(*v1.ValidatingWebhook)) v1.ValidatingWebhook {
	w := v1.ValidatingWebhook{
		Name:                    "webhook.k8s.io",
		ClientConfig:            v1.WebhookClientConfig{URL: ptr.To("https://example.com")},
		SideEffects:             ptr.To(v1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
	}
	for _, e := range edits {
		e(&w)
	}
	return w
}

func mhook(edits ...func(*v1.MutatingWebhook)) v1.MutatingWebhook {
	w := v1.MutatingWebhook{
		Name:                    "webhook.k8s.io",
		ClientConfig:            v1.WebhookClientConfig{URL: ptr.To("https://example.com")},
		SideEffects:             ptr.To(v1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
	}
	for _, e := range edits {
		e(&w)
	}
	return w
}

func withRule(ops []v1.OperationType, resources ...string) func(*v1.ValidatingWebhook) {
	return func(w *v1.ValidatingWebhook) {
		w.Rules = append(w.Rules, v1.RuleWithOperations{Operations: ops,
			Rule: v1.Rule{APIGroups: []string{"a"}, APIVersions: []string{"a"}, Resources: resources}})
	}
}

func withURL(u string) func(*v1.ValidatingWebhook) {
	return func(w *v1.ValidatingWebhook) { w.ClientConfig = v1.WebhookClientConfig{URL: ptr.To(u)} }
}

func withService(path string, port int32) func(*v1.ValidatingWebhook) {
	return func(w *v1.ValidatingWebhook) {
		w.ClientConfig = v1.WebhookClientConfig{Service: &v1.ServiceReference{Namespace: "ns", Name: "n", Path: ptr.To(path), Port: ptr.To(port)}}
	}
}

func withConditions(conds ...v1.MatchCondition) func(*v1.ValidatingWebhook) {
	return func(w *v1.ValidatingWebhook) { w.MatchConditions = conds }
}

func cond(name, expr string) v1.MatchCondition {
	return v1.MatchCondition{Name: name, Expression: expr}
}

var create = []v1.OperationType{"CREATE"}

const qualifiedNameMsg = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

type vwcCase struct {
	name string
	obj  *v1.ValidatingWebhookConfiguration
	want string
}

func runVWCCases(t *testing.T, cases []vwcCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.obj)); got != tc.want {
				t.Errorf("create errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestValidateValidatingWebhookConfiguration(t *testing.T) {
	dns1035 := utilvalidation.IsDNS1035Label("0v")[0]
	runVWCCases(t, []vwcCase{
		{"valid", vwc(vhook()), ""},
		{"AdmissionReviewVersions are required",
			vwc(vhook(func(w *v1.ValidatingWebhook) { w.AdmissionReviewVersions = nil })),
			`webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1`},
		{"bad AdmissionReviewVersion value",
			vwc(vhook(func(w *v1.ValidatingWebhook) { w.AdmissionReviewVersions = []string{"0v"} })),
			`[webhooks[0].admissionReviewVersions[0]: Invalid value: "0v": ` + dns1035 +
				`, webhooks[0].admissionReviewVersions: Invalid value: ["0v"]: must include at least one of v1, v1beta1]`},
		{"mix of accepted and unaccepted AdmissionReviewVersion",
			vwc(vhook(func(w *v1.ValidatingWebhook) { w.AdmissionReviewVersions = []string{"v1beta1", "invalid-version"} })), ""},
		{"duplicate AdmissionReviewVersion",
			vwc(vhook(func(w *v1.ValidatingWebhook) { w.AdmissionReviewVersions = []string{"v1", "v1"} })),
			`webhooks[0].admissionReviewVersions[1]: Invalid value: "v1": duplicate version`},
		{"webhooks must have a fully qualified name",
			vwc(vhook(), vhook(func(w *v1.ValidatingWebhook) { w.Name = "k8s.io" }), vhook(func(w *v1.ValidatingWebhook) { w.Name = "" })),
			`[webhooks[1].name: Invalid value: "k8s.io": should be a domain with at least three segments separated by dots, webhooks[2].name: Required value]`},
		{"webhooks must have unique names when created", vwc(vhook(), vhook()),
			`webhooks[1].name: Duplicate value: "webhook.k8s.io"`},
		{"operations must not be empty or nil", vwc(vhook(withRule([]v1.OperationType{}, "a"), withRule(nil, "a"))),
			`[webhooks[0].rules[0].operations: Required value, webhooks[0].rules[1].operations: Required value]`},
		{`"" is not a valid operation`, vwc(vhook(withRule([]v1.OperationType{"CREATE", ""}, "a"))),
			`webhooks[0].rules[0].operations[1]: Unsupported value: "": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"`},
		{"wildcard operation cannot be mixed", vwc(vhook(withRule([]v1.OperationType{"CREATE", "*"}, "a"))),
			`webhooks[0].rules[0].operations: Invalid value: ["CREATE","*"]: if '*' is present, must not specify other operations`},
		{"* can co-exist with subresources", vwc(vhook(withRule(create, "*", "a/b", "a/*", "*/b"))), ""},
		{"* cannot mix with bare resources", vwc(vhook(withRule(create, "*", "a"))),
			`webhooks[0].rules[0].resources: Invalid value: ["*","a"]: if '*' is present, must not specify other resources without subresources`},
		{"a/* cannot mix with a/x", vwc(vhook(withRule(create, "a/*", "a/x"))),
			`webhooks[0].rules[0].resources[1]: Invalid value: "a/x": if 'a/*' is present, must not specify a/x`},
		{"a/* can mix with a", vwc(vhook(withRule(create, "a/*", "a"))), ""},
		{"*/a cannot mix with x/a", vwc(vhook(withRule(create, "*/a", "x/a"))),
			`webhooks[0].rules[0].resources[1]: Invalid value: "x/a": if '*/a' is present, must not specify x/a`},
		{"*/* cannot mix with other resources", vwc(vhook(withRule(create, "*/*", "a"))),
			`webhooks[0].rules[0].resources: Invalid value: ["*/*","a"]: if '*/*' is present, must not specify other resources`},
		{"groups, versions and scope", vwc(vhook(func(w *v1.ValidatingWebhook) {
			w.Rules = []v1.RuleWithOperations{{Operations: create, Rule: v1.Rule{APIGroups: []string{"a", "*"},
				APIVersions: []string{"*", ""}, Resources: []string{"a", ""}, Scope: ptr.To(v1.ScopeType("Galaxy"))}}}
		})),
			`[webhooks[0].rules[0].apiGroups: Invalid value: ["a","*"]: if '*' is present, must not specify other API groups, ` +
				`webhooks[0].rules[0].apiVersions: Invalid value: ["*",""]: if '*' is present, must not specify other API versions, ` +
				`webhooks[0].rules[0].apiVersions[1]: Required value, webhooks[0].rules[0].resources[1]: Required value, ` +
				`webhooks[0].rules[0].scope: Unsupported value: "Galaxy": supported values: "*", "Cluster", "Namespaced"]`},
		{"failurePolicy can only be Ignore or Fail",
			vwc(vhook(func(w *v1.ValidatingWebhook) { w.FailurePolicy = ptr.To(v1.FailurePolicyType("other")) })),
			`webhooks[0].failurePolicy: Unsupported value: "other": supported values: "Fail", "Ignore"`},
		{"matchPolicy values",
			vwc(vhook(func(w *v1.ValidatingWebhook) { w.MatchPolicy = ptr.To(v1.MatchPolicyType("other")) })),
			`webhooks[0].matchPolicy: Unsupported value: "other": supported values: "Equivalent", "Exact"`},
		{"sideEffects are required", vwc(vhook(func(w *v1.ValidatingWebhook) { w.SideEffects = nil })),
			`webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun`},
		{"sideEffects can only be None or NoneOnDryRun when created",
			vwc(vhook(func(w *v1.ValidatingWebhook) { w.SideEffects = ptr.To(v1.SideEffectClassSome) })),
			`webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`},
	})
}

func TestValidateWebhookClientConfig(t *testing.T) {
	runVWCCases(t, []vwcCase{
		{"both service and URL missing", vwc(vhook(func(w *v1.ValidatingWebhook) { w.ClientConfig = v1.WebhookClientConfig{} })),
			`webhooks[0].clientConfig: Required value: exactly one of url or service is required`},
		{"both service and URL provided", vwc(vhook(func(w *v1.ValidatingWebhook) {
			w.ClientConfig.Service = &v1.ServiceReference{Namespace: "ns", Name: "n"}
		})), `webhooks[0].clientConfig: Required value: exactly one of url or service is required`},
		{"blank URL", vwc(vhook(withURL(""))),
			`[webhooks[0].clientConfig.url: Invalid value: "": 'https' is the only allowed URL scheme; desired format: https://host[/path], ` +
				`webhooks[0].clientConfig.url: Invalid value: "": host must be specified; desired format: https://host[/path]]`},
		{"wrong scheme", vwc(vhook(withURL("http://example.com"))),
			`webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`},
		{"missing host", vwc(vhook(withURL("https:///fancy/webhook"))),
			`webhooks[0].clientConfig.url: Invalid value: "": host must be specified; desired format: https://host[/path]`},
		{"fragment", vwc(vhook(withURL("https://example.com/#bookmark"))),
			`webhooks[0].clientConfig.url: Invalid value: "bookmark": fragments are not permitted in the URL`},
		{"query", vwc(vhook(withURL("https://example.com?arg=value"))),
			`webhooks[0].clientConfig.url: Invalid value: "arg=value": query parameters are not permitted in the URL`},
		{"user", vwc(vhook(withURL("https://harry.potter@example.com/"))),
			`webhooks[0].clientConfig.url: Invalid value: "harry.potter": user information is not permitted in the URL`},
		{"path must start with slash", vwc(vhook(withService("foo/", 443))),
			`webhooks[0].clientConfig.service.path: Invalid value: "foo/": must start with a '/'`},
		{"path accepts slash", vwc(vhook(withService("/", 443))), ""},
		{"path fails //", vwc(vhook(withService("//", 443))),
			`webhooks[0].clientConfig.service.path: Invalid value: "//": segment[0] may not be empty`},
		{"path no empty step", vwc(vhook(withService("/foo//bar/", 443))),
			`webhooks[0].clientConfig.service.path: Invalid value: "/foo//bar/": segment[1] may not be empty`},
		{"path no non-subdomain", vwc(vhook(withService("/apis/foo.bar/v1alpha1/--bad", 443))),
			`webhooks[0].clientConfig.service.path: Invalid value: "/apis/foo.bar/v1alpha1/--bad": segment[3]: ` + utilvalidation.IsDNS1123Subdomain("--bad")[0]},
		{"invalid port 0", vwc(vhook(withService("/", 0))),
			`webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive`},
		{"invalid port >65535", vwc(vhook(withService("/", 65536))),
			`webhooks[0].clientConfig.service.port: Invalid value: 65536: port is not valid: must be between 1 and 65535, inclusive`},
		{"service name and namespace required", vwc(vhook(func(w *v1.ValidatingWebhook) {
			w.ClientConfig = v1.WebhookClientConfig{Service: &v1.ServiceReference{}}
		})), `[webhooks[0].clientConfig.service.name: Required value, webhooks[0].clientConfig.service.namespace: Required value]`},
		{"timeout cannot be greater than 30", vwc(vhook(func(w *v1.ValidatingWebhook) { w.TimeoutSeconds = ptr.To[int32](31) })),
			`webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds`},
		{"timeout cannot be smaller than 1", vwc(vhook(func(w *v1.ValidatingWebhook) { w.TimeoutSeconds = ptr.To[int32](0) })),
			`webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds`},
		{"valid timeouts", vwc(vhook(func(w *v1.ValidatingWebhook) { w.TimeoutSeconds = ptr.To[int32](1) }),
			vhook(func(w *v1.ValidatingWebhook) { w.Name, w.TimeoutSeconds = "webhook2.k8s.io", ptr.To[int32](30) })), ""},
	})
}

func TestValidateWebhookSelectorsAndMatchConditions(t *testing.T) {
	many := make([]v1.MatchCondition, 65)
	for i := range many {
		many[i] = cond(fmt.Sprintf("c%d", i), "true")
	}
	runVWCCases(t, []vwcCase{
		{"selector label values are strict on create", vwc(vhook(func(w *v1.ValidatingWebhook) {
			w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "-bad-"}}
		})), `webhooks[0].objectSelector.matchLabels: Invalid value: "-bad-": ` + utilvalidation.IsValidLabelValue("-bad-")[0]},
		{"selector expression values are strict on create", vwc(vhook(func(w *v1.ValidatingWebhook) { w.NamespaceSelector = badValueSelector() })),
			`webhooks[0].namespaceSelector.matchExpressions[0].values[0]: Invalid value: "-bad-": ` + utilvalidation.IsValidLabelValue("-bad-")[0]},
		{"match condition must have a name", vwc(vhook(withConditions(cond("", "true")))),
			`webhooks[0].matchConditions[0].name: Required value`},
		{"match condition must have a qualified name", vwc(vhook(withConditions(cond("-hello", "true")))),
			`webhooks[0].matchConditions[0].name: Invalid value: "-hello": ` + qualifiedNameMsg},
		{"expression is required", vwc(vhook(withConditions(cond("webhook.k8s.io", "  ")))),
			`webhooks[0].matchConditions[0].expression: Required value`},
		{"invalid expression", vwc(vhook(withConditions(cond("webhook.k8s.io", "object.x in [1, 2, ")))),
			"webhooks[0].matchConditions[0].expression: Invalid value: \"object.x in [1, 2,\": compilation failed: ERROR: <input>:1:19: Syntax error: missing ']' at '<EOF>'\n | object.x in [1, 2,\n | ..................^"},
		{"unique names same hook", vwc(vhook(withConditions(cond("webhook.k8s.io", "true"), cond("webhook.k8s.io", "true")))),
			`webhooks[0].matchConditions[1].name: Duplicate value: "webhook.k8s.io"`},
		{"repeat names allowed across hooks", vwc(vhook(withConditions(cond("c", "true"))),
			vhook(withConditions(cond("c", "true")), func(w *v1.ValidatingWebhook) { w.Name = "webhook2.k8s.io" })), ""},
		{"must evaluate to bool", vwc(vhook(withConditions(cond("webhook.k8s.io", "6")))),
			`webhooks[0].matchConditions[0].expression: Invalid value: "6": must evaluate to bool but got int`},
		{"params are not declared", vwc(vhook(withConditions(cond("p", "params.x == 1")))),
			"webhooks[0].matchConditions[0].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^"},
		{"authorizer is declared", vwc(vhook(withConditions(cond("a", "authorizer.group('').resource('pods').check('get').allowed()")))), ""},
		{"new expressions may not use 1.37 libraries", vwc(vhook(withConditions(cond("l", "[1, 2].includes(1)")))),
			"webhooks[0].matchConditions[0].expression: Invalid value: \"[1, 2].includes(1)\": compilation failed: ERROR: <input>:1:16: undeclared reference to 'includes' (in container '')\n | [1, 2].includes(1)\n | ...............^"},
		{"max of 64 match conditions", vwc(vhook(withConditions(many...))),
			`webhooks[0].matchConditions: Too many: 65: must have at most 64 items`},
		{"static suffix is reserved", &v1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "x.static.k8s.io"}},
			`metadata.name: Invalid value: "x.static.k8s.io": names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API`},
	})
}

func TestValidateMutatingWebhookConfiguration(t *testing.T) {
	cases := []struct {
		name string
		obj  *v1.MutatingWebhookConfiguration
		want string
	}{
		{"valid", mwc(mhook()), ""},
		{"reinvocationPolicy values", mwc(mhook(func(w *v1.MutatingWebhook) { w.ReinvocationPolicy = ptr.To(v1.ReinvocationPolicyType("other")) })),
			`webhooks[0].reinvocationPolicy: Unsupported value: "other": supported values: "IfNeeded", "Never"`},
		{"order of checks", mwc(mhook(func(w *v1.MutatingWebhook) {
			w.Name, w.SideEffects, w.TimeoutSeconds = "k8s.io", nil, ptr.To[int32](60)
			w.ReinvocationPolicy = ptr.To(v1.ReinvocationPolicyType("Always"))
			w.ClientConfig = v1.WebhookClientConfig{}
			w.AdmissionReviewVersions = nil
		}), mhook(func(w *v1.MutatingWebhook) { w.Name = "k8s.io" })),
			`[webhooks[0].name: Invalid value: "k8s.io": should be a domain with at least three segments separated by dots, ` +
				`webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, ` +
				`webhooks[0].timeoutSeconds: Invalid value: 60: the timeout value must be between 1 and 30 seconds, ` +
				`webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never", ` +
				`webhooks[0].clientConfig: Required value: exactly one of url or service is required, ` +
				`webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1, ` +
				`webhooks[1].name: Invalid value: "k8s.io": should be a domain with at least three segments separated by dots, ` +
				`webhooks[1].name: Duplicate value: "k8s.io"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.obj)); got != tc.want {
				t.Errorf("create errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// stored sets the resourceVersion an update needs.
func stored[T interface{ SetResourceVersion(string) }](obj T) T {
	obj.SetResourceVersion("1")
	return obj
}

func TestValidateWebhookConfigurationUpdate(t *testing.T) {
	legacy := func(w *v1.ValidatingWebhook) { w.SideEffects = ptr.To(v1.SideEffectClassUnknown) }
	versions := func(v ...string) func(*v1.ValidatingWebhook) {
		return func(w *v1.ValidatingWebhook) { w.AdmissionReviewVersions = v }
	}
	badLabel := func(w *v1.ValidatingWebhook) { w.NamespaceSelector = badValueSelector() }
	cases := []struct {
		name     string
		old, obj *v1.ValidatingWebhookConfiguration
		want     string
	}{
		{"legacy sideEffects stay allowed", vwc(vhook(legacy)), vwc(vhook(legacy)), ""},
		{"Some allowed once any old webhook had it", vwc(vhook(legacy)),
			vwc(vhook(func(w *v1.ValidatingWebhook) { w.SideEffects = ptr.To(v1.SideEffectClassSome) })), ""},
		{"required message lists every class then", vwc(vhook(legacy)),
			vwc(vhook(func(w *v1.ValidatingWebhook) { w.SideEffects = nil })),
			`webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, Some, Unknown`},
		{"strict sideEffects when the old object was strict", vwc(vhook()), vwc(vhook(legacy)),
			`webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"`},
		{"invalid versions pass with invalid previous versions", vwc(vhook(versions("invalid-v0"))),
			vwc(vhook(versions("invalid-v1", "invalid-v2"))), ""},
		{"invalid versions fail with valid previous versions", vwc(vhook(versions("v1beta1", "invalid-v1"))),
			vwc(vhook(versions("invalid-v1"))),
			`webhooks[0].admissionReviewVersions: Invalid value: ["invalid-v1"]: must include at least one of v1, v1beta1`},
		{"names must stay unique when old names were", vwc(vhook()), vwc(vhook(), vhook()),
			`webhooks[1].name: Duplicate value: "webhook.k8s.io"`},
		{"duplicate names allowed when old had them", vwc(vhook(), vhook()), vwc(vhook(), vhook()), ""},
		{"invalid label values allowed when old had them", vwc(vhook(badLabel)), vwc(vhook(badLabel)), ""},
		{"unchanged matchConditions are not revalidated",
			vwc(vhook(withConditions(cond("c", "params.x")))), vwc(vhook(withConditions(cond("c", "params.x")), legacyTimeout)), ""},
		{"kept expressions compile in the stored environment",
			vwc(vhook(withConditions(cond("c", "[1, 2].includes(1)")))),
			vwc(vhook(withConditions(cond("c", "[1, 2].includes(1)"), cond("d", "true")))), ""},
		{"changed expressions compile in the new environment",
			vwc(vhook(withConditions(cond("c", "true")))), vwc(vhook(withConditions(cond("c", "[1, 2].includes(1)")))),
			"webhooks[0].matchConditions[0].expression: Invalid value: \"[1, 2].includes(1)\": compilation failed: ERROR: <input>:1:16: undeclared reference to 'includes' (in container '')\n | [1, 2].includes(1)\n | ...............^"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := stored(tc.old)
			resourceFor(t, old).Default(old)
			if got := aggregate(updateErrors(t, stored(tc.obj), old)); got != tc.want {
				t.Errorf("update errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// badValueSelector holds a label value strict validation rejects.
func badValueSelector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "a", Operator: metav1.LabelSelectorOpIn, Values: []string{"-bad-"}}}}
}

func legacyTimeout(w *v1.ValidatingWebhook) { w.TimeoutSeconds = ptr.To[int32](5) }
