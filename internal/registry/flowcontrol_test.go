package registry

// Expected values follow upstream pkg/apis/flowcontrol/v1/defaults.go,
// pkg/apis/flowcontrol/validation (the cases of its validation_test.go),
// the declarative rules of k8s.io/api/flowcontrol/v1 and the strategies of
// pkg/registry/flowcontrol, as kube-apiserver 1.37.2 runs them;
// test/upstream/flowcontrolvalidation compares the two over generated
// objects.

import (
	"math"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

func TestFlowcontrolResources(t *testing.T) {
	for _, resource := range []string{"flowschemas", "prioritylevelconfigurations"} {
		gvr := schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: resource}
		r, ok := testCatalogue.Lookup(gvr)
		if !ok {
			t.Fatalf("Lookup(%v) = false, want served", gvr)
		}
		if r.Namespaced || !r.StatusSubresource || !r.ClearStatusOnCreate || !r.TracksGeneration || r.AllowCreateOnUpdate {
			t.Errorf("%s: namespaced=%v status=%v clearStatus=%v generation=%v createOnUpdate=%v, want false true true true false",
				resource, r.Namespaced, r.StatusSubresource, r.ClearStatusOnCreate, r.TracksGeneration, r.AllowCreateOnUpdate)
		}
		if len(r.ShortNames) > 0 || len(r.Categories) > 0 || len(r.Subresources) != 1 || r.Subresources[0].Name != "status" {
			t.Errorf("%s: short names %q, categories %q, subresources %v; want none, none, status", resource, r.ShortNames, r.Categories, r.Subresources)
		}
		// kube-apiserver 1.37 serves v1beta1-3 only when asked to.
		gvr.Version = "v1beta3"
		if _, ok := testCatalogue.Lookup(gvr); ok {
			t.Errorf("Lookup(%v) = true, want not served by default", gvr)
		}
	}
}

func TestFlowcontrolDefaults(t *testing.T) {
	fs := &flowcontrolv1.FlowSchema{}
	resourceFor(t, fs).Default(fs)
	if fs.Spec.MatchingPrecedence != 1000 {
		t.Errorf("defaulted matchingPrecedence = %d, want 1000", fs.Spec.MatchingPrecedence)
	}
	kept := &flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: -3}}
	resourceFor(t, kept).Default(kept)
	if kept.Spec.MatchingPrecedence != -3 {
		t.Errorf("defaulted matchingPrecedence -3 = %d, want kept", kept.Spec.MatchingPrecedence)
	}

	for _, tc := range []struct {
		name    string
		in, out flowcontrolv1.PriorityLevelConfigurationSpec
	}{{
		name: "limited",
		in: flowcontrolv1.PriorityLevelConfigurationSpec{Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			LimitResponse: flowcontrolv1.LimitResponse{Queuing: &flowcontrolv1.QueuingConfiguration{}}}},
		out: flowcontrolv1.PriorityLevelConfigurationSpec{Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](30), LendablePercent: ptr.To[int32](0),
			LimitResponse: flowcontrolv1.LimitResponse{Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 8, QueueLengthLimit: 50}}}},
	}, {
		name: "limited, zero shares kept",
		in: flowcontrolv1.PriorityLevelConfigurationSpec{Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](0), LendablePercent: ptr.To[int32](20), BorrowingLimitPercent: ptr.To[int32](5),
			LimitResponse: flowcontrolv1.LimitResponse{Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 3, HandSize: -1, QueueLengthLimit: 2}}}},
		out: flowcontrolv1.PriorityLevelConfigurationSpec{Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](0), LendablePercent: ptr.To[int32](20), BorrowingLimitPercent: ptr.To[int32](5),
			LimitResponse: flowcontrolv1.LimitResponse{Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 3, HandSize: -1, QueueLengthLimit: 2}}}},
	}, {
		name: "exempt",
		in:   flowcontrolv1.PriorityLevelConfigurationSpec{Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{}},
		out: flowcontrolv1.PriorityLevelConfigurationSpec{Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](0), LendablePercent: ptr.To[int32](0)}},
	}, {
		name: "neither",
		in:   flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited"},
		out:  flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pl := &flowcontrolv1.PriorityLevelConfiguration{Spec: tc.in}
			resourceFor(t, pl).Default(pl)
			if !apiequality.Semantic.DeepEqual(pl.Spec, tc.out) {
				t.Errorf("defaulted spec = %+v, want %+v", pl.Spec, tc.out)
			}
		})
	}
}

func userSubject(name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: name}}
}

func everything() flowcontrolv1.ResourcePolicyRule {
	return flowcontrolv1.ResourcePolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
		ClusterScope: true, Namespaces: []string{"*"}}
}

// flowSchemaWith is a valid schema "system-foo" as edited by edit.
func flowSchemaWith(edit func(fs *flowcontrolv1.FlowSchema)) *flowcontrolv1.FlowSchema {
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "system-foo"}, Spec: flowcontrolv1.FlowSchemaSpec{
		MatchingPrecedence:         50,
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "system-bar"},
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{Subjects: []flowcontrolv1.Subject{userSubject("noxu")},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{everything()}}},
	}}
	if edit != nil {
		edit(fs)
	}
	return fs
}

func TestValidateFlowSchema(t *testing.T) {
	rule0 := func(fs *flowcontrolv1.FlowSchema) *flowcontrolv1.PolicyRulesWithSubjects { return &fs.Spec.Rules[0] }
	const dnsLabel = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
	for _, tc := range []struct {
		name string
		edit func(fs *flowcontrolv1.FlowSchema)
		want string
	}{
		{"valid", nil, ""},
		{"precedence defaulted", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 0 }, ""},
		{"no rule of either kind", func(fs *flowcontrolv1.FlowSchema) { rule0(fs).ResourceRules = nil },
			"spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty"},
		{"service account subject without its member", func(fs *flowcontrolv1.FlowSchema) {
			rule0(fs).Subjects = []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
				User: &flowcontrolv1.UserSubject{Name: "u"}, Group: &flowcontrolv1.GroupSubject{Name: "g"}}}
		}, "[spec.rules[0].subjects[0].serviceAccount: Required value: serviceAccount is required when subject kind is 'ServiceAccount', " +
			"spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind is not 'User', " +
			"spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group']"},
		{"user subject without its member", func(fs *flowcontrolv1.FlowSchema) {
			rule0(fs).Subjects = []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser,
				ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: "a", Namespace: "b"}}}
		}, "[spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User', " +
			"spec.rules[0].subjects[0].serviceAccount: Forbidden: serviceAccount is forbidden when subject kind is not 'ServiceAccount']"},
		{"group subject without a name", func(fs *flowcontrolv1.FlowSchema) {
			rule0(fs).Subjects = []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{}}}
		}, "spec.rules[0].subjects[0].group.name: Required value"},
		{"service account without namespace", func(fs *flowcontrolv1.FlowSchema) {
			rule0(fs).Subjects = []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
				ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: "*"}}}
		}, "spec.rules[0].subjects[0].serviceAccount.namespace: Required value: must specify namespace for service account"},
		{"unknown subject kind", func(fs *flowcontrolv1.FlowSchema) { rule0(fs).Subjects[0].Kind = "FooKind" },
			`spec.rules[0].subjects[0].kind: Unsupported value: "FooKind": supported values: "Group", "ServiceAccount", "User"`},
		{"no subjects", func(fs *flowcontrolv1.FlowSchema) { rule0(fs).Subjects = nil },
			"spec.rules[0].subjects: Required value: subjects must contain at least one value"},
		{"precedence 1 for another schema", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 1 },
			"spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"},
		{"precedence too large", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 10001 },
			"spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000"},
		{"negative precedence", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = -1 },
			"spec.matchingPrecedence: Invalid value: -1: must be a positive value"},
		{"stars mixed with others", func(fs *flowcontrolv1.FlowSchema) {
			rule0(fs).ResourceRules[0] = flowcontrolv1.ResourcePolicyRule{Verbs: []string{"*", "create"}, APIGroups: []string{"*", "tak"},
				Resources: []string{"*", "tok"}, Namespaces: []string{"foo", "*"}}
		}, `[spec.rules[0].resourceRules[0].verbs: Invalid value: ["*","create"]: if '*' is present, must not specify other verbs, ` +
			`spec.rules[0].resourceRules[0].apiGroups: Invalid value: ["*","tak"]: if '*' is present, must not specify other api groups, ` +
			`spec.rules[0].resourceRules[0].resources: Invalid value: ["*","tok"]: if '*' is present, must not specify other resources, ` +
			`spec.rules[0].resourceRules[0].namespaces: Invalid value: ["foo","*"]: if '*' is present, must not specify other namespaces]`},
		{"unknown verb", func(fs *flowcontrolv1.FlowSchema) { rule0(fs).ResourceRules[0].Verbs = []string{"feed"} },
			`spec.rules[0].resourceRules[0].verbs: Unsupported value: ["feed"]: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"`},
		{"namespaces left out", func(fs *flowcontrolv1.FlowSchema) {
			rule0(fs).ResourceRules[0].ClusterScope, rule0(fs).ResourceRules[0].Namespaces = false, nil
		}, "spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace"},
		{"cluster scope alone", func(fs *flowcontrolv1.FlowSchema) { rule0(fs).ResourceRules[0].Namespaces = nil }, ""},
		{"malformed namespace", func(fs *flowcontrolv1.FlowSchema) { rule0(fs).ResourceRules[0].Namespaces = []string{"-foo"} },
			`spec.rules[0].resourceRules[0].namespaces[0]: Invalid value: "-foo": each member of this list must be '*' or a DNS-1123 label; ` + dnsLabel},
		{"non-resource URLs", func(fs *flowcontrolv1.FlowSchema) {
			rule0(fs).NonResourceRules = []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"*", "tik"}},
				{NonResourceURLs: []string{"/healthz/*", "healthz", "/a//b", "/a/*/b"}}}
		}, `[spec.rules[0].nonResourceRules[0].nonResourceURLs: Invalid value: ["*","tik"]: if '*' is present, must not specify other non-resource URLs, ` +
			`spec.rules[0].nonResourceRules[1].verbs: Required value: verbs must contain at least one value, ` +
			`spec.rules[0].nonResourceRules[1].nonResourceURLs[1]: Invalid value: "healthz": must start with slash, ` +
			`spec.rules[0].nonResourceRules[1].nonResourceURLs[2]: Invalid value: "/a//b": must not contain double slash, ` +
			`spec.rules[0].nonResourceRules[1].nonResourceURLs[3]: Invalid value: "/a/*/b": wildcard can only do suffix matching]`},
		{"malformed priority level name", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.PriorityLevelConfiguration.Name = "system+++$$" },
			`spec.priorityLevelConfiguration.name: Invalid value: "system+++$$": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"no priority level", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.PriorityLevelConfiguration.Name = "" },
			"spec.priorityLevelConfiguration.name: Required value: must reference a priority level"},
		{"unknown distinguisher", func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: "ByColor"}
		}, `spec.distinguisherMethod.type: Unsupported value: {"Type":"ByColor"}: supported values: "ByNamespace", "ByUser"`},
		{"mandatory exempt as bootstrapped", func(fs *flowcontrolv1.FlowSchema) {
			fs.Name, fs.Spec = "exempt", mandatoryExemptSchema()
		}, ""},
		{"mandatory exempt changed", func(fs *flowcontrolv1.FlowSchema) {
			fs.Name, fs.Spec = "exempt", mandatoryExemptSchema()
			fs.Spec.Rules[0].NonResourceRules[0].NonResourceURLs = []string{"/"}
		}, `spec: Invalid value: {"PriorityLevelConfiguration":{"Name":"exempt"},"MatchingPrecedence":1,"DistinguisherMethod":null,` +
			`"Rules":[{"Subjects":[{"Kind":"Group","User":null,"Group":{"Name":"system:masters"},"ServiceAccount":null}],` +
			`"ResourceRules":[{"Verbs":["*"],"APIGroups":["*"],"Resources":["*"],"ClusterScope":true,"Namespaces":["*"]}],` +
			`"NonResourceRules":[{"Verbs":["*"],"NonResourceURLs":["/"]}]}]}: spec of 'exempt' must equal the fixed value`},
		{"mandatory catch-all changed", func(fs *flowcontrolv1.FlowSchema) { fs.Name = "catch-all" },
			`spec: Invalid value: {"PriorityLevelConfiguration":{"Name":"system-bar"},"MatchingPrecedence":50,"DistinguisherMethod":null,` +
				`"Rules":[{"Subjects":[{"Kind":"User","User":{"Name":"noxu"},"Group":null,"ServiceAccount":null}],` +
				`"ResourceRules":[{"Verbs":["*"],"APIGroups":["*"],"Resources":["*"],"ClusterScope":true,"Namespaces":["*"]}],` +
				`"NonResourceRules":null}]}: spec of 'catch-all' must equal the fixed value`},
		{"status conditions", func(fs *flowcontrolv1.FlowSchema) {
			fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "1"}, {Type: "1"}, {}}
		}, ""}, // a create starts from an empty status
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, flowSchemaWith(tc.edit))); got != tc.want {
				t.Errorf("create errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func mandatoryExemptSchema() flowcontrolv1.FlowSchemaSpec {
	return flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: 1,
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "exempt"},
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: "system:masters"}}},
			ResourceRules:    []flowcontrolv1.ResourcePolicyRule{everything()},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}}}}
}

func TestNonResourceURLProblem(t *testing.T) {
	for url, want := range map[string]string{
		"": "must not be empty", "foo": "must start with slash", "/": "", "//": "must not contain double slash",
		"/foo": "", "/foo////bar": "must not contain double slash", "/foo/": "", "/foo/*": "",
		"/f*oo": "wildcard can only do suffix matching", "/f oo": "must not contain white-space",
		"/foo*": "wildcard can only do suffix matching", "/*/foo": "wildcard can only do suffix matching",
		"/*/*": "wildcard can only do suffix matching",
	} {
		if got := nonResourceURLProblem(url); got != want {
			t.Errorf("nonResourceURLProblem(%q) = %q, want %q", url, got, want)
		}
	}
}

func limitedSpec(shares int32, lr flowcontrolv1.LimitResponse) flowcontrolv1.PriorityLevelConfigurationSpec {
	return flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: &shares, LimitResponse: lr}}
}

var reject = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}

func queue(queues, hand, length int32) flowcontrolv1.LimitResponse {
	return flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
		Queuing: &flowcontrolv1.QueuingConfiguration{Queues: queues, HandSize: hand, QueueLengthLimit: length}}
}

func priorityLevel(name string, spec flowcontrolv1.PriorityLevelConfigurationSpec) *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Spec: spec}
}

func TestValidatePriorityLevelCreate(t *testing.T) {
	exempt := func(shares, lendable int32) flowcontrolv1.PriorityLevelConfigurationSpec {
		return flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementExempt,
			Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: &shares, LendablePercent: &lendable}}
	}
	repurposed := limitedSpec(42, reject)
	repurposed.Exempt = &flowcontrolv1.ExemptPriorityLevelConfiguration{}
	exemptWithLimited := exempt(0, 0)
	exemptWithLimited.Limited = &flowcontrolv1.LimitedPriorityLevelConfiguration{}
	annotated := priorityLevel("p", limitedSpec(0, reject))
	annotated.Annotations = map[string]string{"flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares": ""}
	borrowing := limitedSpec(-1, queue(64, 8, 50))
	borrowing.Limited.LendablePercent, borrowing.Limited.BorrowingLimitPercent = ptr.To[int32](101), ptr.To[int32](-1)
	for _, tc := range []struct {
		name string
		pl   *flowcontrolv1.PriorityLevelConfiguration
		want string
	}{
		{"exempt as bootstrapped", priorityLevel("exempt", exempt(0, 0)), ""},
		{"exempt with other shares", priorityLevel("exempt", exempt(10, 10)), ""},
		{"exempt out of range", priorityLevel("exempt", exempt(-1, 101)),
			"[spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer, " +
				"spec.exempt.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive]"},
		{"another exempt level", priorityLevel("other", exempt(0, 0)),
			`spec.type: Invalid value: "Exempt": must be 'Exempt' if and only if ` + "`name`" + ` is 'exempt'`},
		// The declarative rule reports spec.exempt last, without detail.
		{"exempt repurposed", priorityLevel("exempt", repurposed),
			`[spec.type: Invalid value: "Limited": must be 'Exempt' if and only if ` + "`name`" + ` is 'exempt', ` +
				`spec: Invalid value: {"Type":"Limited","Limited":{"NominalConcurrencyShares":42,"LimitResponse":{"Type":"Reject","Queuing":null},` +
				`"LendablePercent":0,"BorrowingLimitPercent":null},"Exempt":{"NominalConcurrencyShares":0,"LendablePercent":0}}: ` +
				`spec of 'exempt' except the 'spec.exempt' field must equal the fixed value, spec.exempt: Forbidden]`},
		// The declarative rules check a limited of the wrong type too.
		{"exempt with limited", priorityLevel("exempt", exemptWithLimited),
			`[spec: Invalid value: {"Type":"Exempt","Limited":{"NominalConcurrencyShares":30,"LimitResponse":{"Type":"","Queuing":null},` +
				`"LendablePercent":0,"BorrowingLimitPercent":null},"Exempt":{"NominalConcurrencyShares":0,"LendablePercent":0}}: ` +
				`spec of 'exempt' except the 'spec.exempt' field must equal the fixed value, ` +
				`spec.limited: Forbidden, spec.limited.limitResponse.type: Required value]`},
		{"catch-all as bootstrapped", priorityLevel("catch-all", limitedSpec(5, reject)), ""},
		{"catch-all changed", priorityLevel("catch-all", limitedSpec(42, reject)),
			`spec: Invalid value: {"Type":"Limited","Limited":{"NominalConcurrencyShares":42,"LimitResponse":{"Type":"Reject","Queuing":null},` +
				`"LendablePercent":0,"BorrowingLimitPercent":null},"Exempt":null}: spec of 'catch-all' must equal the fixed value`},
		{"limited with exempt", priorityLevel("broken-limited", flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited, Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{}}),
			"[spec.exempt: Forbidden, spec.limited: Required value]"},
		{"no type", priorityLevel("p", flowcontrolv1.PriorityLevelConfigurationSpec{Limited: limitedSpec(1, reject).Limited}),
			"[spec.limited: Forbidden, spec.type: Required value]"},
		{"unknown type", priorityLevel("p", flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Unlimited"}),
			`spec.type: Unsupported value: "Unlimited": supported values: "Exempt", "Limited"`},
		{"queuing when rejecting", priorityLevel("p", limitedSpec(1, flowcontrolv1.LimitResponse{Type: "Reject",
			Queuing: &flowcontrolv1.QueuingConfiguration{}})), "spec.limited.limitResponse.queuing: Forbidden"},
		{"queue without queuing", priorityLevel("p", limitedSpec(1, flowcontrolv1.LimitResponse{Type: "Queue"})),
			"spec.limited.limitResponse.queuing: Required value"},
		{"no response type", priorityLevel("p", limitedSpec(1, flowcontrolv1.LimitResponse{})),
			"spec.limited.limitResponse.type: Required value"},
		{"unknown response type", priorityLevel("p", limitedSpec(1, flowcontrolv1.LimitResponse{Type: "Drop"})),
			`spec.limited.limitResponse.type: Unsupported value: "Drop": supported values: "Queue", "Reject"`},
		{"queues", priorityLevel("p", limitedSpec(100, queue(64, 8, 50))), ""},
		{"deck too large for hand", priorityLevel("p", limitedSpec(1, queue(512, 8, 50))),
			"spec.limited.limitResponse.queuing.handSize: Invalid value: 8: required entropy bits of deckSize 512 and handSize 8 should not be greater than 60"},
		{"too many queues", priorityLevel("p", limitedSpec(1, queue(math.MaxInt32, 3, 50))),
			"[spec.limited.limitResponse.queuing.queues: Invalid value: 2147483647: must not be greater than 10000000, " +
				"spec.limited.limitResponse.queuing.handSize: Invalid value: 3: required entropy bits of deckSize 2147483647 and handSize 3 should not be greater than 60]"},
		{"most queues", priorityLevel("p", limitedSpec(1, queue(10_000_000, 2, 50))), ""},
		{"hand larger than deck", priorityLevel("p", limitedSpec(1, queue(7, 8, 50))),
			"spec.limited.limitResponse.queuing.handSize: Invalid value: 8: should not be greater than queues (7)"},
		{"negative sizes", priorityLevel("p", limitedSpec(1, queue(-1, -2, -3))),
			"[spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -3: must be positive, " +
				"spec.limited.limitResponse.queuing.queues: Invalid value: -1: must be positive, " +
				"spec.limited.limitResponse.queuing.handSize: Invalid value: -2: must be positive]"},
		{"borrowing out of range", priorityLevel("p", borrowing),
			"[spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer, " +
				"spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive, " +
				"spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer]"},
		{"round-trip annotation", annotated,
			"metadata.annotations: Forbidden: annotation 'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares' is forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.pl)); got != tc.want {
				t.Errorf("create errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestValidatePriorityLevelUpdate: the declarative rules skip what an
// update left as it was, so the handwritten error stands with its detail.
func TestValidatePriorityLevelUpdate(t *testing.T) {
	stored := priorityLevel("p", limitedSpec(1, reject))
	stored.Spec.Exempt = &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](0), LendablePercent: ptr.To[int32](0)}
	stored.Spec.Limited.LendablePercent = ptr.To[int32](0)
	stored.Generation = 1
	for _, tc := range []struct {
		name string
		edit func(pl *flowcontrolv1.PriorityLevelConfiguration)
		want string
	}{
		{"labels only", func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Labels = map[string]string{"a": "b"} },
			"spec.exempt: Forbidden: must be nil if the type is Limited"},
		{"shares only", func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			pl.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](2)
		},
			"spec.exempt: Forbidden: must be nil if the type is Limited"},
		{"exempt changed", func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Exempt.LendablePercent = ptr.To[int32](3) },
			"spec.exempt: Forbidden"},
		{"response changed, type kept", func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			pl.Spec.Exempt = nil
			pl.Spec.Limited.LimitResponse.Queuing = &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: 1}
		}, "spec.limited.limitResponse.queuing: Forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := stored.DeepCopy()
			tc.edit(pl)
			if got := aggregate(updateErrors(t, pl, stored)); got != tc.want {
				t.Errorf("update errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	// An update that leaves a stored empty type alone keeps its detail too.
	untyped := priorityLevel("q", flowcontrolv1.PriorityLevelConfigurationSpec{})
	relabelled := untyped.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	if got, want := aggregate(updateErrors(t, relabelled, untyped)), "spec.type: Required value"; got != want {
		t.Errorf("update of an untyped level = %s, want %s", got, want)
	}
}

// TestFlowcontrolWrites follows the status rules of pkg/registry/flowcontrol:
// a create empties the status, an update keeps it and counts spec changes,
// a status write keeps spec and metadata but managedFields and checks the
// status alone.
func TestFlowcontrolWrites(t *testing.T) {
	fs := flowSchemaWith(nil)
	fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: "True"}}
	r := resourceFor(t, fs)
	if errs := createErrors(t, fs); len(errs) > 0 || len(fs.Status.Conditions) > 0 || fs.Generation != 1 {
		t.Fatalf("create: errors %v, status %+v, generation %d; want none, empty, 1", errs, fs.Status, fs.Generation)
	}
	fs.ResourceVersion = "5"
	fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "Dangling", Status: "False"}}

	relabelled := fs.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	relabelled.Status = flowcontrolv1.FlowSchemaStatus{}
	if errs := PrepareUpdate(r, relabelled, fs); len(errs) > 0 || relabelled.Generation != 1 || len(relabelled.Status.Conditions) != 1 {
		t.Errorf("relabel: errors %v, generation %d, status %+v; want none, 1, kept", errs, relabelled.Generation, relabelled.Status)
	}
	moved := fs.DeepCopy()
	moved.Spec.MatchingPrecedence = 60
	if errs := PrepareUpdate(r, moved, fs); len(errs) > 0 || moved.Generation != 2 {
		t.Errorf("spec change: errors %v, generation %d; want none, 2", errs, moved.Generation)
	}

	// A stored spec that no longer validates does not block status writes.
	stored := fs.DeepCopy()
	stored.Spec.MatchingPrecedence = -1
	status := stored.DeepCopy()
	status.Spec.MatchingPrecedence = 70
	status.Labels = map[string]string{"a": "b"}
	status.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "apf", Operation: metav1.ManagedFieldsOperationUpdate}}
	status.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "Dangling", Status: "True"}, {Type: "Dangling"}, {}}
	out := PrepareForUpdate(r, "status", status, stored).(*flowcontrolv1.FlowSchema)
	if out.Spec.MatchingPrecedence != -1 || out.Labels != nil || len(out.ManagedFields) != 1 || len(out.Status.Conditions) != 3 {
		t.Errorf("status write kept %+v, want the stored spec and labels, the new managedFields and status", out)
	}
	want := `[status.conditions[1].type: Duplicate value: "Dangling", status.conditions[2].type: Required value]`
	if got := aggregate(r.ValidateSubresourceChange("status", out, stored)); got != want {
		t.Errorf("status write errors = %s, want %s", got, want)
	}

	pl := priorityLevel("p", limitedSpec(1, reject))
	pr := resourceFor(t, pl)
	pl.Spec.Limited.LendablePercent = ptr.To[int32](0)
	plStatus := pl.DeepCopy()
	plStatus.Spec.Type = "Nope"
	plStatus.Status.Conditions = []flowcontrolv1.PriorityLevelConfigurationCondition{{Type: "x"}, {Type: "x"}}
	plOut := PrepareForUpdate(pr, "status", plStatus, pl).(*flowcontrolv1.PriorityLevelConfiguration)
	want = `status.conditions[1].type: Duplicate value: "x"`
	if got := aggregate(pr.ValidateSubresourceChange("status", plOut, pl)); plOut.Spec.Type != "Limited" || got != want {
		t.Errorf("priority level status write: type %q, errors %s; want Limited, %s", plOut.Spec.Type, got, want)
	}
}
