package match_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

func deploymentsRules(groupVersions ...string) []v1.RuleWithOperations {
	var out []v1.RuleWithOperations
	for _, gv := range groupVersions {
		g, v, _ := strings.Cut(gv, "/")
		out = append(out, rule(all(), []string{g}, []string{v}, []string{"deployments", "deployments/scale"}, "*"))
	}
	return out
}

// TestWebhookVectors is upstream's TestShouldCallHook
// (k8s.io/apiserver/pkg/admission/plugin/webhook/generic/webhook_test.go); its
// matchConditions cases are the caller's job (pkg/admission/cel).
func TestWebhookVectors(t *testing.T) {
	deploy := attrs(admission.Create, "ns", "name", gvr("apps", "v1", "deployments"), "", gvk("apps", "v1", "Deployment"))
	scale := attrs(admission.Create, "ns", "name", gvr("apps", "v1", "deployments"), "scale", gvk("autoscaling", "v1", "Scale"))
	widget := attrs(admission.Create, "ns", "name", gvr("example.com", "v2", "widgets"), "", gvk("example.com", "v2", "Widget"))
	exact, equivalent := ptr(v1.Exact), ptr(v1.Equivalent)
	tests := []struct {
		name     string
		rules    []v1.RuleWithOperations
		policy   *v1.MatchPolicyType
		a        *admission.Attributes
		wantErr  string
		want     match.Reason
		resource schema.GroupVersionResource
		sub      string
		kind     schema.GroupVersionKind
	}{
		{name: "47 no rules", rules: []v1.RuleWithOperations{}, a: deploy, want: match.SkipRule},
		{name: "48 invalid kind lookup", policy: equivalent, a: widget, want: match.Errored,
			rules:   []v1.RuleWithOperations{rule(all(), []string{"example.com"}, []string{"v1"}, []string{"widgets"}, "*")},
			wantErr: "Internal error occurred: unable to convert to example.com/v1, Resource=widgets: unknown kind"},
		{name: "49 wildcard", rules: []v1.RuleWithOperations{rule(all(), all(), all(), all(), "*")}, a: deploy,
			resource: gvr("apps", "v1", "deployments"), kind: gvk("apps", "v1", "Deployment")},
		{name: "50 prefer exact", rules: deploymentsRules("extensions/v1beta1", "apps/v1beta1", "apps/v1"), a: deploy,
			resource: gvr("apps", "v1", "deployments"), kind: gvk("apps", "v1", "Deployment")},
		{name: "51 miss, nil policy", rules: deploymentsRules("extensions/v1beta1", "apps/v1beta1"), a: deploy, want: match.SkipRule},
		{name: "52 miss, Exact", rules: deploymentsRules("extensions/v1beta1", "apps/v1beta1"), policy: exact, a: deploy, want: match.SkipRule},
		{name: "53 Equivalent, extensions first", rules: deploymentsRules("extensions/v1beta1", "apps/v1beta1"), policy: equivalent, a: deploy,
			resource: gvr("extensions", "v1beta1", "deployments"), kind: gvk("extensions", "v1beta1", "Deployment")},
		{name: "54 Equivalent, apps first", rules: deploymentsRules("apps/v1beta1", "extensions/v1beta1"), policy: equivalent, a: deploy,
			resource: gvr("apps", "v1beta1", "deployments"), kind: gvk("apps", "v1beta1", "Deployment")},
		{name: "55 scale exact", rules: deploymentsRules("extensions/v1beta1", "apps/v1beta1", "apps/v1"), a: scale,
			resource: gvr("apps", "v1", "deployments"), sub: "scale", kind: gvk("autoscaling", "v1", "Scale")},
		{name: "56 scale miss", rules: deploymentsRules("extensions/v1beta1", "apps/v1beta1"), a: scale, want: match.SkipRule},
		{name: "56 scale miss, Exact", rules: deploymentsRules("extensions/v1beta1", "apps/v1beta1"), policy: exact, a: scale, want: match.SkipRule},
		{name: "57 scale Equivalent, extensions first", rules: deploymentsRules("extensions/v1beta1", "apps/v1beta1"), policy: equivalent, a: scale,
			resource: gvr("extensions", "v1beta1", "deployments"), sub: "scale", kind: gvk("extensions", "v1beta1", "Scale")},
		{name: "58 scale Equivalent, apps first", rules: deploymentsRules("apps/v1beta1", "extensions/v1beta1"), policy: equivalent, a: scale,
			resource: gvr("apps", "v1beta1", "deployments"), sub: "scale", kind: gvk("apps", "v1beta1", "Scale")},
	}
	env := match.Env{Equivalents: deploymentsMapper(), Namespaces: newNamespaces()}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := match.Webhook(tt.rules, tt.policy, everything, everything)
			d := matchOne(t, env, c, tt.a)
			if d.Reason != tt.want {
				t.Fatalf("Match = %v (%v), want %v", d.Reason, d.Err, tt.want)
			}
			if tt.wantErr != "" {
				var se *apierrors.StatusError
				if !asStatus(d.Err, &se) || se.Status().Code != 500 || d.Err.Error() != tt.wantErr {
					t.Fatalf("Match error = %#v, want 500 %q", d.Err, tt.wantErr)
				}
				return
			}
			if d.Reason != match.Matched {
				return
			}
			if d.Resource != tt.resource || d.Subresource != tt.sub || d.Kind != tt.kind {
				t.Errorf("Match invocation = %v %q %v, want %v %q %v", d.Resource, d.Subresource, d.Kind, tt.resource, tt.sub, tt.kind)
			}
			if wantEq := tt.resource != tt.a.Resource; d.Equivalent != wantEq {
				t.Errorf("Match Equivalent = %v, want %v", d.Equivalent, wantEq)
			}
		})
	}
}

func asStatus(err error, se **apierrors.StatusError) bool {
	s, ok := err.(*apierrors.StatusError)
	*se = s
	return ok
}

func sel(key string, op metav1.LabelSelectorOperator, values ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

func labelled(lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: lbls}}
}

// TestNamespaceSelectorVectors is upstream's namespace matcher tests
// (k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/namespace/matcher_test.go):
// where the labels come from, and errors.
func TestNamespaceSelectorVectors(t *testing.T) {
	ns1 := namespaceObj("1", map[string]string{"runlevel": "1"})
	lookup := newNamespaces(ns1)
	nsRes := gvr("", "v1", "namespaces")
	withObj := func(a *admission.Attributes, obj runtime.Object) *admission.Attributes { a.Object = obj; return a }
	newNS := namespaceObj("2", map[string]string{"runlevel": "2"})
	tests := []struct {
		name    string
		a       *admission.Attributes
		runlvl  string // the runlevel the selector must see
		wantErr string
		code    int32
	}{
		{name: "72 namespace CREATE uses the object", a: withObj(attrs(admission.Create, "", "2", nsRes, "", gvk("", "v1", "Namespace")), newNS), runlvl: "2"},
		{name: "73 namespace UPDATE uses the new object", a: withObj(attrs(admission.Update, "2", "2", nsRes, "", gvk("", "v1", "Namespace")), newNS), runlvl: "2"},
		{name: "74 namespace DELETE uses the stored namespace", a: withObj(attrs(admission.Delete, "1", "1", nsRes, "", gvk("", "v1", "Namespace")), newNS), runlvl: "1"},
		{name: "75 namespaces/finalizers uses the stored namespace", a: attrs(admission.Create, "1", "mock", nsRes, "finalizers", gvk("", "v1", "Namespace")), runlvl: "1"},
		{name: "76 pod uses its namespace", a: attrs(admission.Create, "1", "mock", gvr("", "v1", "pods"), "", gvk("", "v1", "Pod")), runlvl: "1"},
		{name: "85 missing namespace", a: attrs(admission.Create, "missing-ns", "p", gvr("", "v1", "pods"), "", gvk("", "v1", "Pod")),
			wantErr: `namespaces "missing-ns" not found`, code: 404},
		{name: "lookup failure is a 500", a: attrs(admission.Create, "broken", "p", gvr("", "v1", "pods"), "", gvk("", "v1", "Pod")),
			wantErr: "Internal error occurred: storage is broken", code: 500},
		{name: "namespace CREATE without an object", a: attrs(admission.Create, "", "2", nsRes, "", gvk("", "v1", "Namespace")),
			wantErr: "Internal error occurred: object does not implement the Object interfaces", code: 500},
	}
	env := match.Env{Namespaces: lookup}
	rules := []v1.RuleWithOperations{rule(all(), all(), all(), []string{"*/*"}, "")}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, lvl := range []string{"1", "2"} {
				c := match.Webhook(rules, nil, sel("runlevel", metav1.LabelSelectorOpIn, lvl), everything)
				d := matchOne(t, env, c, tt.a)
				if tt.wantErr != "" {
					se, ok := d.Err.(*apierrors.StatusError)
					if d.Reason != match.Errored || !ok || se.Error() != tt.wantErr || se.Status().Code != tt.code {
						t.Fatalf("Match = %v %v, want %d %q", d.Reason, d.Err, tt.code, tt.wantErr)
					}
					continue
				}
				want := match.SkipNamespaceSelector
				if lvl == tt.runlvl {
					want = match.Matched
				}
				if d.Reason != want {
					t.Errorf("Match with runlevel In [%s] = %v, want %v", lvl, d.Reason, want)
				}
			}
		})
	}

}

// TestNamespaceSelectorEdges: errors only when rules match, cluster scope,
// and no lookup for {}.
func TestNamespaceSelectorEdges(t *testing.T) {
	lookup := newNamespaces(namespaceObj("1", map[string]string{"runlevel": "1"}))
	env := match.Env{Namespaces: lookup}
	rules := []v1.RuleWithOperations{rule(all(), all(), all(), []string{"*/*"}, "")}
	t.Run("86 missing namespace, rules do not match", func(t *testing.T) {
		c := match.Webhook([]v1.RuleWithOperations{rule(all(), all(), all(), []string{"nodes"}, "")}, nil,
			&metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}, everything)
		a := attrs(admission.Create, "missing-ns", "p", gvr("", "v1", "pods"), "", gvk("", "v1", "Pod"))
		if d := matchOne(t, env, c, a); d.Reason != match.SkipRule || d.Err != nil {
			t.Errorf("Match = %v %v, want SkipRule without error", d.Reason, d.Err)
		}
	})
	t.Run("77 cluster-scoped resource is never exempt", func(t *testing.T) {
		c := match.Webhook(rules, nil, nil, everything) // nil selects nothing
		a := attrs(admission.Create, "", "n", gvr("", "v1", "nodes"), "", gvk("", "v1", "Node"))
		if d := matchOne(t, env, c, a); d.Reason != match.Matched {
			t.Errorf("Match = %v, want Matched", d.Reason)
		}
	})
	t.Run("empty selector needs no lookup", func(t *testing.T) {
		before := lookup.calls.Load()
		c := match.Webhook(rules, nil, everything, everything)
		a := attrs(admission.Create, "missing-ns", "p", gvr("", "v1", "pods"), "", gvk("", "v1", "Pod"))
		if d := matchOne(t, env, c, a); d.Reason != match.Matched || lookup.calls.Load() != before {
			t.Errorf("Match = %v after %d lookups, want Matched after none", d.Reason, lookup.calls.Load()-before)
		}
	})
	t.Run("invalid selector is a 500 only when rules match", func(t *testing.T) {
		bad := sel("bad key!", metav1.LabelSelectorOpExists)
		a := attrs(admission.Create, "1", "p", gvr("", "v1", "pods"), "", gvk("", "v1", "Pod"))
		if d := matchOne(t, env, match.Webhook(rules, nil, bad, everything), a); d.Reason != match.Errored || !apierrors.IsInternalError(d.Err) {
			t.Errorf("Match = %v %v, want a 500", d.Reason, d.Err)
		}
		miss := []v1.RuleWithOperations{rule(all(), all(), all(), []string{"nodes"}, "")}
		if d := matchOne(t, env, match.Webhook(miss, nil, bad, everything), a); d.Reason != match.SkipRule {
			t.Errorf("Match = %v %v, want SkipRule", d.Reason, d.Err)
		}
	})
}

// TestObjectSelectorVectors is upstream's object matcher tests
// (k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/object/matcher_test.go).
func TestObjectSelectorVectors(t *testing.T) {
	notIn1 := sel("runlevel", metav1.LabelSelectorOpNotIn, "1")
	rules := []v1.RuleWithOperations{rule(all(), all(), all(), []string{"*/*"}, "")}
	mk := func(obj, old runtime.Object) *admission.Attributes {
		a := attrs(admission.Update, "", "n", gvr("", "v1", "nodes"), "", gvk("", "v1", "Node"))
		a.Object, a.OldObject = obj, old
		return a
	}
	lvl := func(v string) runtime.Object { return labelled(map[string]string{"runlevel": v}) }
	tests := []struct {
		name string
		sel  *metav1.LabelSelector
		a    *admission.Attributes
		want match.Reason
	}{
		{"78 empty selector, no objects", everything, mk(nil, nil), match.Matched},
		{"79 new object runlevel 2", notIn1, mk(lvl("2"), nil), match.Matched},
		{"80 old object runlevel 2", notIn1, mk(nil, lvl("2")), match.Matched},
		{"81 new object runlevel 1", notIn1, mk(lvl("1"), nil), match.SkipObjectSelector},
		{"82 old object runlevel 1", notIn1, mk(nil, lvl("1")), match.SkipObjectSelector},
		{"83 no metadata", notIn1, mk(&corev1.NodeProxyOptions{}, nil), match.SkipObjectSelector},
		{"84 empty selector, no metadata", everything, mk(&corev1.NodeProxyOptions{}, nil), match.Matched},
		{"either object", notIn1, mk(lvl("1"), lvl("2")), match.Matched},
		{"no labels", notIn1, mk(labelled(nil), nil), match.Matched},
		{"nil selects nothing", nil, mk(lvl("2"), lvl("2")), match.SkipObjectSelector},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := match.Webhook(rules, nil, everything, tt.sel)
			if d := matchOne(t, match.Env{}, c, tt.a); d.Reason != tt.want {
				t.Errorf("Match = %v, want %v", d.Reason, tt.want)
			}
		})
	}
}

// TestNamespaceReadOnce checks that one request reads its namespace once,
// however many criteria and plugins (Requests sharing a Record) need it.
func TestNamespaceReadOnce(t *testing.T) {
	lookup := newNamespaces(namespaceObj("team", map[string]string{"team": "a"}))
	env := match.Env{Namespaces: lookup}
	rules := []v1.RuleWithOperations{rule(all(), all(), all(), all(), "")}
	var cs []*match.Criteria
	for _, v := range []string{"a", "b", "c"} {
		for range 10 {
			cs = append(cs, match.Webhook(rules, nil, &metav1.LabelSelector{MatchLabels: map[string]string{"team": v}}, everything))
		}
	}
	a := attrs(admission.Create, "team", "p", gvr("", "v1", "pods"), "", gvk("", "v1", "Pod"))
	for plugin := range 2 {
		r := match.NewRequest(context.Background(), env, a)
		matched := 0
		for _, c := range cs {
			if c.Match(&r).Reason == match.Matched {
				matched++
			}
		}
		if matched != 10 {
			t.Errorf("plugin %d: %d criteria matched, want 10", plugin, matched)
		}
	}
	if n := lookup.calls.Load(); n != 1 {
		t.Errorf("namespace read %d times, want 1", n)
	}

	// The record remembers one namespace; another name is read through.
	b := *a
	b.Namespace = "other"
	r := match.NewRequest(context.Background(), env, &b)
	if d := cs[0].Match(&r); d.Reason != match.Errored || !apierrors.IsNotFound(d.Err) {
		t.Errorf("Match in a missing namespace = %v %v, want a 404", d.Reason, d.Err)
	}
	if n := lookup.calls.Load(); n != 2 {
		t.Errorf("namespace read %d times, want 2", n)
	}
}

// TestNamespaceReadOnceConcurrently: validating webhooks run in parallel,
// each with its own Request over one Record.
func TestNamespaceReadOnceConcurrently(t *testing.T) {
	lookup := newNamespaces(namespaceObj("team", map[string]string{"team": "a"}))
	env := match.Env{Namespaces: lookup}
	c := match.Webhook([]v1.RuleWithOperations{rule(all(), all(), all(), all(), "")}, nil,
		&metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, everything)
	a := attrs(admission.Create, "team", "p", gvr("", "v1", "pods"), "", gvk("", "v1", "Pod"))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			r := match.NewRequest(context.Background(), env, a)
			if d := c.Match(&r); d.Reason != match.Matched {
				t.Errorf("Match = %v, want Matched", d.Reason)
			}
		})
	}
	wg.Wait()
	if n := lookup.calls.Load(); n != 1 {
		t.Errorf("namespace read %d times, want 1", n)
	}
}
