package flowcontrolvalidation

import (
	"fmt"
	"math"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// The inputs of upstream's own validation tests
// (pkg/apis/flowcontrol/validation/validation_test.go), as v1 objects.
// Upstream hands them to validation as they are; here each also runs with
// decoding defaults, as a client's write would.

func fsMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, ResourceVersion: "1"}
}

func fs(name, level string, precedence int32, rules ...flowcontrolv1.PolicyRulesWithSubjects) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{ObjectMeta: fsMeta(name), Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: precedence,
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level}, Rules: rules}}
}

func subjects(s ...flowcontrolv1.Subject) []flowcontrolv1.Subject { return s }

func user(name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: name}}
}

func group(name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: name}}
}

func resources(verbs, groups, res, namespaces []string, cluster bool) []flowcontrolv1.ResourcePolicyRule {
	return []flowcontrolv1.ResourcePolicyRule{{Verbs: verbs, APIGroups: groups, Resources: res, Namespaces: namespaces, ClusterScope: cluster}}
}

func urls(verbs, urls []string) []flowcontrolv1.NonResourcePolicyRule {
	return []flowcontrolv1.NonResourcePolicyRule{{Verbs: verbs, NonResourceURLs: urls}}
}

var all = []string{"*"}

func upstreamFlowSchemas() map[string]runtime.Object {
	rule := func(s []flowcontrolv1.Subject, r []flowcontrolv1.ResourcePolicyRule, n []flowcontrolv1.NonResourcePolicyRule) flowcontrolv1.PolicyRulesWithSubjects {
		return flowcontrolv1.PolicyRulesWithSubjects{Subjects: s, ResourceRules: r, NonResourceRules: n}
	}
	everything := resources(all, all, all, all, true)
	badExempt := fs("exempt", "exempt", 1, rule(subjects(group("system:masters")), everything, urls(all, []string{"/"})))
	badCatchAll := fs("catch-all", "catch-all", 10000, rule(subjects(group("system:unauthenticated"), group("system:authenticated")),
		everything, urls(all, []string{"/"})))
	badCatchAll.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}
	mandatory := func(i int) *flowcontrolv1.FlowSchema {
		m := bootstrap.MandatoryFlowSchemas[i]
		return &flowcontrolv1.FlowSchema{ObjectMeta: fsMeta(m.Name), Spec: *m.Spec.DeepCopy()}
	}
	sa := func(name, ns string) flowcontrolv1.Subject {
		return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount,
			ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: name, Namespace: ns}}
	}
	anyNS := resources(all, all, all, all, false)
	return map[string]runtime.Object{
		"no rules of either kind": fs("system-foo", "system-bar", 50, rule(subjects(user("noxu")), nil, nil)),
		"stars":                   fs("system-foo", "system-bar", 50, rule(subjects(group("noxu")), anyNS, nil)),
		"service account union": fs("system-foo", "system-bar", 50, rule([]flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
			User: &flowcontrolv1.UserSubject{Name: "noxu"}, Group: &flowcontrolv1.GroupSubject{Name: "noxu"}}}, anyNS, nil)),
		"user union": fs("system-foo", "system-bar", 50, rule([]flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser,
			ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: "noxu", Namespace: "default"}, Group: &flowcontrolv1.GroupSubject{Name: "noxu"}}}, anyNS, nil)),
		"group union": fs("system-foo", "system-bar", 50, rule([]flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup,
			ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: "noxu", Namespace: "default"}, User: &flowcontrolv1.UserSubject{Name: "noxu"}}}, anyNS, nil)),
		"exempt":              mandatory(0),
		"catch-all":           mandatory(1),
		"bad exempt":          badExempt,
		"bad catch-all":       badCatchAll,
		"precedence 1":        fs("system-foo", "system-bar", 1, rule(subjects(group("noxu")), anyNS, nil)),
		"stars mixed":         fs("system-foo", "system-bar", 50, rule(subjects(group("noxu")), resources([]string{"*", "create"}, []string{"*", "tak"}, []string{"*", "tok"}, all, false), nil)),
		"both kinds of rules": fs("system-foo", "system-bar", 50, rule(subjects(group("noxu")), anyNS, urls(all, all))),
		"urls mixed":          fs("system-foo", "system-bar", 50, rule(subjects(group("noxu")), nil, urls(all, []string{"*", "tik"}))),
		"subject kind":        fs("system-foo", "system-bar", 50, rule([]flowcontrolv1.Subject{{Kind: "FooKind"}}, anyNS, nil)),
		"verb":                fs("system-foo", "system-bar", 50, rule(subjects(group("noxu")), resources([]string{"feed"}, all, all, all, false), nil)),
		"level name":          fs("system-foo", "system+++$$", 50, rule(subjects(group("noxu")), anyNS, nil)),
		"sa namespace":        fs("system-foo", "system-bar", 50, rule(subjects(sa("noxu", "")), anyNS, nil)),
		"no kind":             fs("system-foo", "system-bar", 50, rule([]flowcontrolv1.Subject{{}}, anyNS, nil)),
		"no namespaces": fs("system-foo", "system-bar", 50, rule(subjects(group("noxu")),
			resources(all, all, all, nil, false), nil)),
		"cluster scope":     fs("system-foo", "system-bar", 50, rule(subjects(group("noxu")), resources(all, all, all, nil, true), nil)),
		"cluster and every": fs("system-foo", "system-bar", 50, rule(subjects(group("noxu")), resources(all, all, all, all, true), nil)),
		"every mixed":       fs("system-foo", "system-bar", 50, rule(subjects(group("noxu")), resources(all, all, all, []string{"foo", "*"}, false), nil)),
		"namespace":         fs("system-foo", "system-bar", 50, rule(subjects(group("noxu")), resources(all, all, all, []string{"-foo"}, false), nil)),
		"precedence 10001":  fs("system-foo", "system-bar", 10001, rule(subjects(group("noxu")), anyNS, nil)),
		"urls": fs("system-foo", "system-bar", 50, rule(subjects(group("noxu")), nil,
			urls([]string{"get"}, []string{"", "foo", "/", "//", "/foo", "/foo////bar", "/foo/", "/foo/*", "/f*oo", "/f oo", "/foo*", "/*/foo", "/*/*"}))),
	}
}

func pl(name string, spec flowcontrolv1.PriorityLevelConfigurationSpec) *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: fsMeta(name), Spec: spec}
}

func limited(shares int32, lr flowcontrolv1.LimitResponse) *flowcontrolv1.LimitedPriorityLevelConfiguration {
	return &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: &shares, LimitResponse: lr}
}

func queuing(queues, hand, length int32) flowcontrolv1.LimitResponse {
	return flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
		Queuing: &flowcontrolv1.QueuingConfiguration{Queues: queues, HandSize: hand, QueueLengthLimit: length}}
}

var reject = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}

func upstreamPriorityLevels() map[string]runtime.Object {
	const lim, ex = flowcontrolv1.PriorityLevelEnablementLimited, flowcontrolv1.PriorityLevelEnablementExempt
	exempt := func(shares, lendable int32) *flowcontrolv1.ExemptPriorityLevelConfiguration {
		return &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: &shares, LendablePercent: &lendable}
	}
	spec := func(t flowcontrolv1.PriorityLevelEnablement, l *flowcontrolv1.LimitedPriorityLevelConfiguration,
		e *flowcontrolv1.ExemptPriorityLevelConfiguration) flowcontrolv1.PriorityLevelConfigurationSpec {
		return flowcontrolv1.PriorityLevelConfigurationSpec{Type: t, Limited: l, Exempt: e}
	}
	annotated := pl("broken-limited", spec(lim, limited(0, reject), nil))
	annotated.Annotations = map[string]string{"flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares": ""}
	borrowing := limited(5, reject)
	borrowing.LendablePercent, borrowing.BorrowingLimitPercent = ptr.To[int32](101), ptr.To[int32](-1)
	out := map[string]runtime.Object{
		"exempt":                     pl("exempt", spec(ex, nil, exempt(0, 0))),
		"wrong exempt":               pl("exempt", spec(lim, limited(42, reject), nil)),
		"exempt values 1":            pl("exempt", spec(ex, nil, exempt(-1, 101))),
		"exempt values 2":            pl("exempt", spec(ex, nil, exempt(-1, -1))),
		"exempt repurposed":          pl("exempt", spec(lim, limited(42, reject), &flowcontrolv1.ExemptPriorityLevelConfiguration{})),
		"exempt with limited":        pl("exempt", spec(ex, limited(42, reject), &flowcontrolv1.ExemptPriorityLevelConfiguration{})),
		"exempt changed":             pl("exempt", spec(ex, nil, exempt(10, 10))),
		"limited with exempt":        pl("broken-limited", spec(lim, nil, &flowcontrolv1.ExemptPriorityLevelConfiguration{})),
		"limited without details":    pl("broken-limited", spec(lim, nil, nil)),
		"max in flight":              pl("max-in-flight", spec(lim, limited(42, reject), nil)),
		"queuing when rejecting":     pl("broken-limited", spec(lim, limited(42, flowcontrolv1.LimitResponse{Type: "Reject", Queuing: &flowcontrolv1.QueuingConfiguration{}}), nil)),
		"wrong catch-all":            pl("catch-all", spec(lim, limited(42, reject), nil)),
		"catch-all":                  pl("catch-all", spec(lim, limited(5, reject), nil)),
		"queue without queuing":      pl("broken-queuing", spec(lim, limited(42, flowcontrolv1.LimitResponse{Type: "Queue"}), nil)),
		"queuing":                    pl("queuing", spec(lim, limited(42, queuing(512, 4, 100)), nil)),
		"overflow 1":                 pl("queuing", spec(lim, limited(42, queuing(512, 8, 100)), nil)),
		"overflow 2":                 pl("queuing", spec(lim, limited(42, queuing(128, 10, 100)), nil)),
		"overflow 3":                 pl("queuing", spec(lim, limited(42, queuing(math.MaxInt32, 3, 100)), nil)),
		"most queues":                pl("queuing", spec(lim, limited(42, queuing(10_000_000, 2, 100)), nil)),
		"hand larger than deck":      pl("queuing", spec(lim, limited(42, queuing(7, 8, 100)), nil)),
		"round-trip annotation":      annotated,
		"no type":                    pl("broken", spec("", nil, nil)),
		"no response type":           pl("broken", spec(lim, limited(42, flowcontrolv1.LimitResponse{}), nil)),
		"borrowing":                  pl("borrowing", spec(lim, borrowing, nil)),
		"negative shares":            pl("shares", spec(lim, limited(-1, reject), nil)),
		"zero shares":                pl("shares", spec(lim, limited(0, reject), nil)),
		"no type with both members":  pl("broken", spec("", limited(1, queuing(0, 0, 0)), exempt(0, 0))),
		"unknown type with limited":  pl("broken", spec("Unlimited", limited(1, flowcontrolv1.LimitResponse{Queuing: &flowcontrolv1.QueuingConfiguration{}}), nil)),
		"exempt with broken limited": pl("exempt", spec(ex, limited(1, flowcontrolv1.LimitResponse{Type: "Drop", Queuing: &flowcontrolv1.QueuingConfiguration{}}), nil)),
	}
	for _, lendable := range []int32{-1, 0, 50, 100, 101} {
		l := limited(5, reject)
		l.LendablePercent = &lendable
		out[fmt.Sprintf("lendable %d", lendable)] = pl("lend", spec(lim, l, nil))
	}
	return out
}

// edgeUpdates are updates whose outcome depends on the old object: the
// declarative rules skip what did not change, and status writes keep
// the stored spec.
func edgeUpdates() map[string][2]runtime.Object {
	stored := pl("p", flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: limited(1, reject),
		Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{}})
	stored.Generation = 3
	legacyscheme.Scheme.Default(stored)
	relabelled := stored.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	shares := stored.DeepCopy()
	shares.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](2)
	exemptChanged := stored.DeepCopy()
	exemptChanged.Spec.Exempt.LendablePercent = ptr.To[int32](4)
	queued := stored.DeepCopy()
	queued.Spec.Limited.LimitResponse.Queuing = &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: 1}
	untyped := pl("q", flowcontrolv1.PriorityLevelConfigurationSpec{Limited: limited(1, flowcontrolv1.LimitResponse{})})
	legacyscheme.Scheme.Default(untyped)
	untypedRelabelled := untyped.DeepCopy()
	untypedRelabelled.Labels = map[string]string{"a": "b"}
	untypedQueued := untyped.DeepCopy()
	untypedQueued.Spec.Limited.LimitResponse.Queuing = &flowcontrolv1.QueuingConfiguration{}
	nowLimited := untyped.DeepCopy()
	nowLimited.Spec.Type = "Limited"
	schema := fs("s", "l", 50, flowcontrolv1.PolicyRulesWithSubjects{Subjects: subjects(user("u"))})
	schema.Generation = 2
	legacyscheme.Scheme.Default(schema)
	schemaMoved := schema.DeepCopy()
	schemaMoved.Spec.MatchingPrecedence = 60
	return map[string][2]runtime.Object{
		"relabelled":          {relabelled, stored},
		"shares changed":      {shares, stored},
		"exempt changed":      {exemptChanged, stored},
		"queuing added":       {queued, stored},
		"untyped relabelled":  {untypedRelabelled, untyped},
		"untyped queued":      {untypedQueued, untyped},
		"typed":               {nowLimited, untyped},
		"schema moved":        {schemaMoved, schema},
		"schema kept, broken": {schema.DeepCopy(), schema},
	}
}

func TestUpstreamTables(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	for _, table := range []map[string]runtime.Object{upstreamFlowSchemas(), upstreamPriorityLevels()} {
		for name, obj := range table {
			for _, defaulted := range []bool{false, true} {
				compare(t, cat, write{name: name, obj: obj, defaulted: defaulted}, &c)
			}
		}
	}
	for name, pair := range edgeUpdates() {
		for _, status := range []bool{false, true} {
			compare(t, cat, write{name: name, obj: pair[0], old: pair[1], status: status, defaulted: true}, &c)
		}
	}
	t.Log(c.String())
}
