package match_test

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

func named(names []string, r v1.RuleWithOperations) v1.NamedRuleWithOperations {
	return v1.NamedRuleWithOperations{ResourceNames: names, RuleWithOperations: r}
}

func deployRule(gv, res string) v1.RuleWithOperations {
	g, v := "apps", "v1"
	switch gv {
	case "extensions/v1beta1":
		g, v = "extensions", "v1beta1"
	case "apps/v1beta1":
		v = "v1beta1"
	}
	return rule(all(), []string{g}, []string{v}, []string{res}, "*")
}

type policyVector struct {
	name     string
	c        *match.Criteria
	a        *admission.Attributes
	want     match.Reason
	resource schema.GroupVersionResource
	kind     schema.GroupVersionKind
	err      string
}

// policyVectors are upstream's policy matching tests
// (k8s.io/apiserver/pkg/admission/plugin/policy/matching/matching_test.go) and what its
// dispatcher (k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go) does with
// binding matchResources, nil selectors, excluded resource names, object
// selectors and a missing namespace.
func policyVectors() []policyVector {
	deploy := attrs(admission.Create, "ns", "name", gvr("apps", "v1", "deployments"), "", gvk("apps", "v1", "Deployment"))
	extScale := attrs(admission.Create, "ns", "name", gvr("extensions", "v1beta1", "deployments"), "scale", gvk("autoscaling", "v1", "Scale"))
	pod := attrs(admission.Create, "ns", "name", gvr("", "v1", "pods"), "", gvk("", "v1", "Pod"))
	pod.Object = labelled(map[string]string{"app": "a"})
	ghost := attrs(admission.Create, "ghost", "name", gvr("", "v1", "pods"), "", gvk("", "v1", "Pod"))
	mr := func(mp *v1.MatchPolicyType, rules, exclude []v1.NamedRuleWithOperations) *v1.MatchResources {
		return &v1.MatchResources{MatchPolicy: mp, NamespaceSelector: everything, ObjectSelector: everything,
			ResourceRules: rules, ExcludeResourceRules: exclude}
	}
	badSel := sel("key", metav1.LabelSelectorOpIn, "bad value")
	withSel := func(m *v1.MatchResources, ns, obj *metav1.LabelSelector) *v1.MatchResources {
		m.NamespaceSelector, m.ObjectSelector = ns, obj
		return m
	}
	eq := ptr(v1.Equivalent)
	anyRule := rule(all(), all(), all(), all(), "*")
	podsRule := rule(all(), all(), all(), []string{"pods"}, "")
	return []policyVector{
		{name: "65 prefer exact", a: deploy, c: match.Policy(mr(eq, []v1.NamedRuleWithOperations{
			named(nil, deployRule("extensions/v1beta1", "deployments")), named(nil, deployRule("apps/v1beta1", "deployments")), named(nil, deployRule("apps/v1", "deployments"))}, nil)),
			resource: gvr("apps", "v1", "deployments"), kind: gvk("apps", "v1", "Deployment")},
		{name: "66 Exact miss", a: deploy, want: match.SkipRule, c: match.Policy(mr(ptr(v1.Exact), []v1.NamedRuleWithOperations{
			named(nil, deployRule("extensions/v1beta1", "deployments")), named(nil, deployRule("apps/v1beta1", "deployments"))}, nil))},
		{name: "66 nil matchPolicy is Exact", a: deploy, want: match.SkipRule, c: match.Policy(mr(nil, []v1.NamedRuleWithOperations{
			named(nil, deployRule("extensions/v1beta1", "deployments"))}, nil))},
		{name: "66 Equivalent, first rule wins", a: deploy, c: match.Policy(mr(eq, []v1.NamedRuleWithOperations{
			named(nil, deployRule("extensions/v1beta1", "deployments")), named(nil, deployRule("apps/v1beta1", "deployments"))}, nil)),
			resource: gvr("extensions", "v1beta1", "deployments"), kind: gvk("extensions", "v1beta1", "Deployment")},
		{name: "67 scale via equivalent, with name", a: extScale, c: match.Policy(mr(eq, []v1.NamedRuleWithOperations{
			named([]string{"name"}, rule(all(), []string{"apps"}, []string{"v1"}, []string{"deployments", "deployments/scale"}, "*"))}, nil)),
			resource: gvr("apps", "v1", "deployments"), kind: gvk("autoscaling", "v1", "Scale")},
		{name: "name miss through equivalent", a: extScale, want: match.SkipResourceName, c: match.Policy(mr(eq, []v1.NamedRuleWithOperations{
			named([]string{"wrong-name"}, rule(all(), []string{"apps"}, []string{"v1"}, []string{"deployments", "deployments/scale"}, "*"))}, nil))},
		{name: "68 exclude miss", a: deploy, c: match.Policy(mr(nil, []v1.NamedRuleWithOperations{named(nil, anyRule)},
			[]v1.NamedRuleWithOperations{named(nil, deployRule("extensions/v1beta1", "deployments"))})),
			resource: gvr("apps", "v1", "deployments"), kind: gvk("apps", "v1", "Deployment")},
		{name: "68 exclude hit", a: deploy, want: match.SkipExcludeRule, c: match.Policy(mr(nil, []v1.NamedRuleWithOperations{named(nil, anyRule)},
			[]v1.NamedRuleWithOperations{named(nil, deployRule("apps/v1", "deployments"))}))},
		{name: "68 exclude hit through equivalent", a: deploy, want: match.SkipExcludeRule, c: match.Policy(mr(eq, []v1.NamedRuleWithOperations{named(nil, anyRule)},
			[]v1.NamedRuleWithOperations{named(nil, deployRule("extensions/v1beta1", "deployments"))}))},
		{name: "68 empty resourceRules", a: deploy, c: match.Policy(mr(nil, nil, nil)),
			resource: gvr("apps", "v1", "deployments"), kind: gvk("apps", "v1", "Deployment")},
		{name: "68 empty rule", a: deploy, want: match.SkipRule, c: match.Policy(mr(nil, []v1.NamedRuleWithOperations{{}}, nil))},
		{name: "69 bad namespace selector, rules miss", a: deploy, want: match.SkipRule,
			c: match.Policy(withSel(mr(nil, []v1.NamedRuleWithOperations{named(nil, podsRule)}, nil), badSel, everything))},
		{name: "69 bad namespace selector, rules match", a: pod, want: match.Errored, err: "bad value",
			c: match.Policy(withSel(mr(nil, []v1.NamedRuleWithOperations{named(nil, podsRule)}, nil), badSel, everything))},
		{name: "69 bad object selector, rules match", a: pod, want: match.Errored, err: "bad value",
			c: match.Policy(withSel(mr(nil, []v1.NamedRuleWithOperations{named(nil, podsRule)}, nil), everything, badSel))},
		{name: "unknown kind is a plain error", want: match.Errored, err: "unable to convert to example.com/v1, Resource=widgets: unknown kind",
			a: attrs(admission.Create, "ns", "w", gvr("example.com", "v2", "widgets"), "", gvk("example.com", "v2", "Widget")),
			c: match.Policy(mr(eq, []v1.NamedRuleWithOperations{named(nil, rule(all(), all(), []string{"v1"}, []string{"widgets"}, ""))}, nil))},
		{name: "unknown kind in exclude rules fails even if rules miss", want: match.Errored, err: "unknown kind",
			a: attrs(admission.Create, "ns", "w", gvr("example.com", "v2", "widgets"), "", gvk("example.com", "v2", "Widget")),
			c: match.Policy(mr(eq, []v1.NamedRuleWithOperations{named(nil, podsRule)},
				[]v1.NamedRuleWithOperations{named(nil, rule(all(), all(), []string{"v1"}, []string{"widgets"}, ""))}))},
		{name: "46 binding namespaceSelector narrows", a: pod, want: match.SkipNamespaceSelector,
			c: match.Binding(withSel(mr(nil, nil, nil), &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}, everything))},
		{name: "49 exclude with resourceNames", a: pod, want: match.SkipExcludeRule, c: match.Policy(mr(nil,
			[]v1.NamedRuleWithOperations{named(nil, podsRule)}, []v1.NamedRuleWithOperations{named([]string{"name"}, podsRule)}))},
		{name: "50 objectSelector mismatch", a: pod, want: match.SkipObjectSelector,
			c: match.Policy(withSel(mr(nil, []v1.NamedRuleWithOperations{named(nil, podsRule)}, nil), everything,
				&metav1.LabelSelector{MatchLabels: map[string]string{"app": "zzz"}}))},
		{name: "51 namespace does not exist", a: ghost, want: match.Errored, err: `namespaces "ghost" not found`,
			c: match.Policy(withSel(mr(nil, []v1.NamedRuleWithOperations{named(nil, podsRule)}, nil), &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}, everything))},
		{name: "binding without matchResources matches", a: ghost, c: match.Binding(nil),
			resource: gvr("", "v1", "pods"), kind: gvk("", "v1", "Pod")},
	}
}

func TestPolicyVectors(t *testing.T) {
	env := match.Env{Equivalents: deploymentsMapper(), Namespaces: newNamespaces(namespaceObj("ns", map[string]string{"env": "prod"}))}
	for _, tt := range policyVectors() {
		t.Run(tt.name, func(t *testing.T) {
			d := matchOne(t, env, tt.c, tt.a)
			if d.Reason != tt.want {
				t.Fatalf("Match = %v (%v), want %v", d.Reason, d.Err, tt.want)
			}
			if tt.err != "" {
				if d.Err == nil || !strings.Contains(d.Err.Error(), tt.err) {
					t.Fatalf("Match error = %v, want one containing %q", d.Err, tt.err)
				}
				return
			}
			if d.Reason == match.Matched && (d.Resource != tt.resource || d.Kind != tt.kind) {
				t.Errorf("Match = %v %v, want %v %v", d.Resource, d.Kind, tt.resource, tt.kind)
			}
		})
	}
}

// TestPolicyConfigErrors: nil constraints and selectors fail every request.
func TestPolicyConfigErrors(t *testing.T) {
	a := attrs(admission.Create, "", "n", gvr("", "v1", "nodes"), "", gvk("", "v1", "Node"))
	tests := []struct {
		name string
		c    *match.Criteria
		want error
	}{
		{"policy without matchConstraints", match.Policy(nil), match.ErrNoMatchConstraints},
		{"policy nil namespaceSelector", match.Policy(&v1.MatchResources{ObjectSelector: everything}), match.ErrNilNamespaceSelector},
		{"binding {} checks namespaceSelector first", match.Binding(&v1.MatchResources{}), match.ErrNilNamespaceSelector},
		{"binding nil objectSelector", match.Binding(&v1.MatchResources{NamespaceSelector: everything}), match.ErrNilObjectSelector},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := matchOne(t, match.Env{}, tt.c, a)
			if d.Reason != match.Errored || !errors.Is(d.Err, tt.want) || !errors.Is(tt.c.Err(), tt.want) {
				t.Errorf("Match = %v %v, want %v", d.Reason, d.Err, tt.want)
			}
			if apierrors.IsInternalError(d.Err) {
				t.Errorf("Match error %v is a StatusError, want a plain configuration error", d.Err)
			}
		})
	}
	if got := match.ErrNilObjectSelector.Error(); got != "a nil object selector was passed, please ensure selectors are initialized properly" {
		t.Errorf("ErrNilObjectSelector = %q", got)
	}
}
