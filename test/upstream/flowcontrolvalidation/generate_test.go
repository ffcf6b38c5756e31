package flowcontrolvalidation

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// writesPerKind are the generated creates, updates and status writes
// compared per kind.
const writesPerKind = 3000

func TestGenerated(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	for ki, kind := range []string{"FlowSchema", "PriorityLevelConfiguration"} {
		g := &generator{rng: rand.New(rand.NewSource(int64(ki + 1)))}
		for i := range writesPerKind {
			var w write
			switch g.rng.Intn(3) {
			case 0:
				w = write{name: fmt.Sprintf("%s #%d create", kind, i), obj: g.object(kind), defaulted: g.rng.Intn(8) != 0}
			case 1:
				old := g.stored(kind)
				w = write{name: fmt.Sprintf("%s #%d update", kind, i), obj: g.changed(old), old: old, defaulted: true}
			default:
				old := g.stored(kind)
				w = write{name: fmt.Sprintf("%s #%d status", kind, i), obj: g.changed(old), old: old, status: true, defaulted: true}
			}
			compare(t, cat, w, &c)
		}
	}
	t.Log(c.String())
	if c.refused < writesPerKind/3 || c.accepted < writesPerKind/3 {
		t.Errorf("generated writes are too one-sided: %s", c.String())
	}
}

type generator struct{ rng *rand.Rand }

func (g *generator) pick(options ...string) string { return options[g.rng.Intn(len(options))] }

func (g *generator) chance(n int) bool { return g.rng.Intn(n) == 0 }

// mostly returns valid most of the time, else any of the others.
func (g *generator) mostly(valid string, others ...string) string {
	if g.rng.Intn(4) != 0 {
		return valid
	}
	return g.pick(others...)
}

func (g *generator) int32Of(options ...int32) int32 { return options[g.rng.Intn(len(options))] }

// int32Ptr is nil or one of options.
func (g *generator) int32Ptr(options ...int32) *int32 {
	if g.chance(3) {
		return nil
	}
	return ptr.To(g.int32Of(options...))
}

// list is nil, empty, or one or two of options.
func (g *generator) list(options ...string) []string {
	switch g.rng.Intn(10) {
	case 0:
		return nil
	case 1:
		return []string{}
	case 2, 3:
		return []string{g.pick(options...), g.pick(options...)}
	}
	return []string{g.pick(options...)}
}

func (g *generator) meta(name string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: g.mostly(name, "", "Bad_Name", "a/b", "x.y", "exempt", "catch-all")}
	if g.chance(12) {
		m.GenerateName = g.pick("gen-", "Bad_", "a/")
	}
	if g.chance(8) {
		m.Labels = map[string]string{g.mostly("app", "bad key!"): g.mostly("web", "bad value!")}
	}
	if g.chance(15) {
		m.Finalizers = []string{g.pick("cleanup", "example.com/x", "kubernetes")}
	}
	return m
}

func (g *generator) object(kind string) runtime.Object {
	if kind == "FlowSchema" {
		return g.flowSchema()
	}
	return g.priorityLevel()
}

func (g *generator) flowSchema() *flowcontrolv1.FlowSchema {
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: g.meta("fs-1")}
	if g.chance(10) { // a mandatory schema, as bootstrapped or nearly
		m := bootstrap.MandatoryFlowSchemas[g.rng.Intn(len(bootstrap.MandatoryFlowSchemas))]
		fs.Name, fs.Spec = m.Name, *m.Spec.DeepCopy()
		if g.chance(2) {
			fs.Spec.Rules = append(fs.Spec.Rules, g.policyRules())
		}
	} else {
		fs.Spec = g.flowSchemaSpec()
	}
	fs.Status = g.flowSchemaStatus()
	return fs
}

func (g *generator) flowSchemaSpec() flowcontrolv1.FlowSchemaSpec {
	s := flowcontrolv1.FlowSchemaSpec{
		MatchingPrecedence:         g.int32Of(0, 50, 500, 10000, 0, 50, 500, 1, 10001, -5),
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: g.mostly("global-default", "", "Bad_Name", "exempt")},
	}
	if g.chance(2) {
		s.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodType(
			g.mostly(g.pick("ByUser", "ByNamespace"), "", "ByColor", "byuser"))}
	}
	for range g.rng.Intn(3) {
		s.Rules = append(s.Rules, g.policyRules())
	}
	return s
}

func (g *generator) policyRules() flowcontrolv1.PolicyRulesWithSubjects {
	var r flowcontrolv1.PolicyRulesWithSubjects
	for range g.rng.Intn(3) {
		r.Subjects = append(r.Subjects, g.subject())
	}
	for range g.rng.Intn(3) {
		r.ResourceRules = append(r.ResourceRules, flowcontrolv1.ResourcePolicyRule{
			Verbs:        g.list("get", "list", "*", "feed", "proxy"),
			APIGroups:    g.list("", "apps", "*"),
			Resources:    g.list("pods", "*", "deployments/scale"),
			Namespaces:   g.list("ns1", "*", "-foo", "Bad_NS"),
			ClusterScope: g.chance(2),
		})
	}
	for range g.rng.Intn(2) {
		r.NonResourceRules = append(r.NonResourceRules, flowcontrolv1.NonResourcePolicyRule{
			Verbs:           g.list("get", "*", "watch", "feed"),
			NonResourceURLs: g.list("/healthz", "/api/*", "*", "/", "healthz", "/a//b", "/a/*/b", "/f oo", "", "/a*"),
		})
	}
	return r
}

func (g *generator) subject() flowcontrolv1.Subject {
	kind := g.mostly(g.pick("User", "Group", "ServiceAccount"), "", "Robot")
	s := flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKind(kind)}
	member := func(own string) bool {
		if kind == own {
			return !g.chance(6)
		}
		return g.chance(8)
	}
	if member("User") {
		s.User = &flowcontrolv1.UserSubject{Name: g.mostly("alice", "")}
	}
	if member("Group") {
		s.Group = &flowcontrolv1.GroupSubject{Name: g.mostly("system:authenticated", "")}
	}
	if member("ServiceAccount") {
		s.ServiceAccount = &flowcontrolv1.ServiceAccountSubject{Name: g.mostly(g.pick("default", "*"), "", "Bad_SA", "a:b"),
			Namespace: g.mostly("ns1", "", "Bad_NS", "*")}
	}
	return s
}

// conditionTypes are the types of 0-3 conditions: distinct, or with
// duplicates and empty ones now and then.
func (g *generator) conditionTypes() []string {
	if g.chance(3) {
		return []string{g.pick("Dangling", "", "Other"), g.pick("Dangling", "", "Other")}
	}
	return []string{"Dangling", "Other", "Third"}[:g.rng.Intn(4)]
}

func (g *generator) flowSchemaStatus() flowcontrolv1.FlowSchemaStatus {
	var st flowcontrolv1.FlowSchemaStatus
	for _, t := range g.conditionTypes() {
		st.Conditions = append(st.Conditions, flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionType(t),
			Status: flowcontrolv1.ConditionStatus(g.pick("True", "False", ""))})
	}
	return st
}

func (g *generator) priorityLevel() *flowcontrolv1.PriorityLevelConfiguration {
	pl := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: g.meta("pl-1")}
	if g.chance(8) { // a mandatory level, as bootstrapped or nearly
		m := bootstrap.MandatoryPriorityLevelConfigurations[g.rng.Intn(len(bootstrap.MandatoryPriorityLevelConfigurations))]
		pl.Name, pl.Spec = m.Name, *m.Spec.DeepCopy()
		if g.chance(2) {
			g.tweakLevel(&pl.Spec)
		}
	} else {
		pl.Spec = g.priorityLevelSpec(pl.Name)
	}
	if g.chance(15) {
		pl.Annotations = map[string]string{"flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares": g.pick("", "true")}
	}
	for _, t := range g.conditionTypes() {
		pl.Status.Conditions = append(pl.Status.Conditions, flowcontrolv1.PriorityLevelConfigurationCondition{
			Type: flowcontrolv1.PriorityLevelConfigurationConditionType(t), Status: "True"})
	}
	return pl
}

// priorityLevelSpec is a spec for a level of that name: mostly of the
// type the name calls for.
func (g *generator) priorityLevelSpec(name string) flowcontrolv1.PriorityLevelConfigurationSpec {
	typ := "Limited"
	if name == "exempt" {
		typ = "Exempt"
	}
	s := flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablement(g.mostly(typ, "Limited", "Exempt", "", "Unlimited"))}
	if g.member(s.Type == "Limited") {
		s.Limited = g.limited()
	}
	if g.member(s.Type == "Exempt") {
		s.Exempt = g.exempt()
	}
	return s
}

// member says whether to set a union member: mostly when the type calls
// for it, now and then when it does not.
func (g *generator) member(wanted bool) bool {
	if wanted {
		return !g.chance(8)
	}
	return g.chance(5)
}

func (g *generator) limited() *flowcontrolv1.LimitedPriorityLevelConfiguration {
	return &flowcontrolv1.LimitedPriorityLevelConfiguration{
		NominalConcurrencyShares: g.int32Ptr(-1, 0, 5, 30, 100),
		LendablePercent:          g.int32Ptr(-1, 0, 50, 100, 101),
		BorrowingLimitPercent:    g.int32Ptr(-1, 0, 200),
		LimitResponse:            g.limitResponse(),
	}
}

func (g *generator) limitResponse() flowcontrolv1.LimitResponse {
	lr := flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseType(g.mostly(g.pick("Queue", "Reject"), "", "Drop"))}
	if g.member(lr.Type == "Queue") {
		lr.Queuing = &flowcontrolv1.QueuingConfiguration{
			Queues:           g.int32Of(0, -1, 1, 7, 64, 128, 512, 10_000_000, 10_000_001, math.MaxInt32),
			HandSize:         g.int32Of(0, -2, 1, 3, 8, 10),
			QueueLengthLimit: g.int32Of(0, -3, 1, 50),
		}
	}
	return lr
}

func (g *generator) exempt() *flowcontrolv1.ExemptPriorityLevelConfiguration {
	return &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: g.int32Ptr(-1, 0, 10), LendablePercent: g.int32Ptr(-1, 0, 101)}
}

// tweakLevel changes one part of a level's spec.
func (g *generator) tweakLevel(s *flowcontrolv1.PriorityLevelConfigurationSpec) {
	switch g.rng.Intn(7) {
	case 0:
		s.Type = flowcontrolv1.PriorityLevelEnablement(g.pick("Limited", "Exempt", "", "Unlimited"))
	case 1:
		s.Exempt = nil
		if g.chance(2) {
			s.Exempt = g.exempt()
		}
	case 2:
		s.Limited = nil
		if g.chance(2) {
			s.Limited = g.limited()
		}
	case 3:
		if s.Limited != nil {
			s.Limited.NominalConcurrencyShares = g.int32Ptr(-1, 0, 5, 7)
		}
	case 4:
		if s.Limited != nil {
			s.Limited.LimitResponse = g.limitResponse()
		}
	case 5:
		if s.Limited != nil && s.Limited.LimitResponse.Queuing != nil {
			s.Limited.LimitResponse.Queuing.HandSize = g.int32Of(0, 1, 9)
		} else if s.Limited != nil {
			s.Limited.LimitResponse.Queuing = &flowcontrolv1.QueuingConfiguration{Queues: 3, HandSize: 2, QueueLengthLimit: 1}
		}
	default:
		if s.Exempt != nil {
			s.Exempt.LendablePercent = g.int32Ptr(-1, 5, 101)
		}
	}
}

// stored is an object as stored: defaulted, with a valid name, a
// resourceVersion and a generation, and otherwise whatever was allowed
// when it was written (possibly no longer valid).
func (g *generator) stored(kind string) runtime.Object {
	obj := g.object(kind)
	m := metaOf(obj)
	if m.Name != "exempt" && m.Name != "catch-all" || g.chance(3) {
		m.Name = map[string]string{"FlowSchema": "fs-1", "PriorityLevelConfiguration": "pl-1"}[kind]
	}
	m.GenerateName, m.ResourceVersion, m.Generation, m.Finalizers = "", "7", int64(1+g.rng.Intn(3)), nil
	m.Annotations, m.Labels = nil, nil
	// Mostly without conditions; otherwise whatever a status write left.
	if !g.chance(4) {
		clearConditions(obj)
	}
	legacyscheme.Scheme.Default(obj)
	return obj
}

// changed is a write over old: some fields kept, some changed (status
// included, for status writes).
func (g *generator) changed(old runtime.Object) runtime.Object {
	obj := old.DeepCopyObject()
	m := metaOf(obj)
	if g.chance(4) {
		m.Labels = map[string]string{"tier": g.mostly("gold", "bad value!")}
	}
	if g.chance(8) {
		m.Annotations = map[string]string{g.pick("note", "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares"): "x"}
	}
	if g.chance(15) {
		m.ResourceVersion = ""
	}
	if g.chance(6) {
		m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "apf", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "flowcontrol.apiserver.k8s.io/v1"}}
	}
	switch o := obj.(type) {
	case *flowcontrolv1.FlowSchema:
		fresh := g.flowSchemaSpec()
		switch g.rng.Intn(6) {
		case 0:
			o.Spec = fresh
		case 1:
			o.Spec.MatchingPrecedence = fresh.MatchingPrecedence
		case 2:
			o.Spec.Rules = fresh.Rules
		case 3:
			o.Spec.DistinguisherMethod = fresh.DistinguisherMethod
		}
		if g.chance(2) {
			o.Status = g.flowSchemaStatus()
		}
	case *flowcontrolv1.PriorityLevelConfiguration:
		switch g.rng.Intn(4) {
		case 0:
			o.Spec = g.priorityLevelSpec(o.Name)
		case 1, 2:
			g.tweakLevel(&o.Spec)
		}
		if g.chance(2) {
			o.Status = g.priorityLevel().Status
		}
	}
	return obj
}

func clearConditions(obj runtime.Object) {
	switch o := obj.(type) {
	case *flowcontrolv1.FlowSchema:
		o.Status.Conditions = nil
	case *flowcontrolv1.PriorityLevelConfiguration:
		o.Status.Conditions = nil
	}
}

func metaOf(obj runtime.Object) *metav1.ObjectMeta {
	switch o := obj.(type) {
	case *flowcontrolv1.FlowSchema:
		return &o.ObjectMeta
	case *flowcontrolv1.PriorityLevelConfiguration:
		return &o.ObjectMeta
	}
	panic(fmt.Sprintf("not a flowcontrol object: %T", obj))
}
