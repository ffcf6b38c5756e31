package match_test

import (
	"context"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	upadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/webhook"
	webhookgeneric "k8s.io/apiserver/pkg/admission/plugin/webhook/generic"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/admitd/admitd/pkg/admission"
)

// This file builds the upstream oracle: the genuine k8s.io/apiserver
// matchers (webhook ShouldCallHook, policy DefinitionMatches and
// BindingMatches) wired to the same namespaces and equivalent resources as
// ours, and random inputs drawn from small alphabets so that hits, misses and
// every error path occur often.

var oracleNamespaces = []*corev1.Namespace{
	namespaceObj("prod", map[string]string{"env": "prod"}),
	namespaceObj("dev", map[string]string{"env": "dev"}),
	namespaceObj("bare", nil),
}

// oracle holds upstream's matchers.
type oracle struct {
	hook   *webhookgeneric.Webhook
	policy generic.PolicyMatcher
	o      upadmission.ObjectInterfaces
}

func newOracle(t testing.TB, mapper runtime.EquivalentResourceMapper) *oracle {
	t.Helper()
	var objs []runtime.Object
	for _, ns := range oracleNamespaces {
		objs = append(objs, ns)
	}
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	indexer := factory.Core().V1().Namespaces().Informer().GetIndexer()
	for _, ns := range oracleNamespaces {
		if err := indexer.Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	hook, err := webhookgeneric.NewWebhook(upadmission.NewHandler(upadmission.Create), nil, nil,
		func(*webhookutil.ClientManager) webhookgeneric.Dispatcher { return nil })
	if err != nil {
		t.Fatal(err)
	}
	hook.SetExternalKubeClientSet(client)
	hook.SetExternalKubeInformerFactory(factory)
	return &oracle{
		hook:   hook,
		policy: generic.NewPolicyMatcher(matching.NewMatcher(brokenLister{factory.Core().V1().Namespaces().Lister()}, client)),
		o:      &upadmission.RuntimeObjectInterfaces{EquivalentResourceMapper: mapper},
	}
}

// brokenLister fails for the namespace "broken", as fakeNamespaces does.
type brokenLister struct {
	inner interface {
		List(labels.Selector) ([]*corev1.Namespace, error)
		Get(string) (*corev1.Namespace, error)
	}
}

func (b brokenLister) List(s labels.Selector) ([]*corev1.Namespace, error) { return b.inner.List(s) }
func (b brokenLister) Get(name string) (*corev1.Namespace, error) {
	if name == "broken" {
		return nil, errBroken
	}
	return b.inner.Get(name)
}

func upstreamAttrs(a *admission.Attributes) upadmission.Attributes {
	return upadmission.NewAttributesRecord(a.Object, a.OldObject, a.Kind, a.Namespace, a.Name, a.Resource,
		a.Subresource, upadmission.Operation(a.Operation), a.Options, a.DryRun, nil)
}

// result is a matcher outcome in a comparable form.
type result struct {
	matched  bool
	resource schema.GroupVersionResource
	sub      string
	kind     schema.GroupVersionKind
	err      string
	code     int32 // 0 for an error that is not a StatusError
}

func errResult(err error) result {
	r := result{err: err.Error()}
	if se, ok := err.(*apierrors.StatusError); ok {
		r.code = se.Status().Code
	}
	return r
}

func (o *oracle) webhook(h *v1.ValidatingWebhook, a *admission.Attributes) result {
	acc := webhook.NewValidatingWebhookAccessor("uid", "cfg", h)
	inv, err := o.hook.ShouldCallHook(context.Background(), acc, upstreamAttrs(a), o.o, nil)
	switch {
	case err != nil:
		return errResult(err)
	case inv == nil:
		return result{}
	}
	return result{matched: true, resource: inv.Resource, sub: inv.Subresource, kind: inv.Kind}
}

type policyAccessor struct{ mr *v1.MatchResources }

func (p policyAccessor) GetName() string                             { return "p" }
func (p policyAccessor) GetNamespace() string                        { return "" }
func (p policyAccessor) GetParamKind() *v1.ParamKind                 { return nil }
func (p policyAccessor) GetMatchConstraints() *v1.MatchResources     { return p.mr }
func (p policyAccessor) GetFailurePolicy() *v1.FailurePolicyType     { return nil }
func (p policyAccessor) GetPolicyName() types.NamespacedName         { return types.NamespacedName{Name: "p"} }
func (p policyAccessor) GetParamRef() *v1.ParamRef                   { return nil }
func (p policyAccessor) GetMatchResources() *v1.MatchResources       { return p.mr }
func (p policyAccessor) GetFailurePolicyValue() v1.FailurePolicyType { return v1.Fail }

func (o *oracle) definition(mr *v1.MatchResources, a *admission.Attributes) result {
	ok, res, kind, err := o.policy.DefinitionMatches(upstreamAttrs(a), o.o, policyAccessor{mr})
	switch {
	case err != nil:
		return errResult(err)
	case !ok:
		return result{}
	}
	return result{matched: true, resource: res, kind: kind}
}

func (o *oracle) binding(mr *v1.MatchResources, a *admission.Attributes) result {
	ok, err := o.policy.BindingMatches(upstreamAttrs(a), o.o, policyAccessor{mr})
	if err != nil {
		return errResult(err)
	}
	return result{matched: ok}
}

// gen draws random configurations and requests.
type gen struct{ rng *rand.Rand }

func (g gen) pick(items []string) string { return items[g.rng.IntN(len(items))] }

func (g gen) subset(items []string, max int) []string {
	n := g.rng.IntN(max + 1)
	out := make([]string, 0, n)
	for range n {
		out = append(out, g.pick(items))
	}
	return out
}

var (
	genOps       = []string{"CREATE", "UPDATE", "DELETE", "CONNECT", "*", "PATCH"}
	genGroups    = []string{"", "apps", "extensions", "example.com", "*"}
	genVersions  = []string{"v1", "v1beta1", "v2", "*"}
	genResources = []string{"pods", "deployments", "namespaces", "widgets", "nodes", "*", "pods/*", "*/status", "*/*",
		"deployments/scale", "pods/status", "namespaces/finalize", "*/scale", "deployments/*", "pods/exec/x"}
	genScopes = []string{"", "*", "Cluster", "Namespaced", "Galaxy"}
	genNames  = []string{"name", "other", ""}
)

func (g gen) rule() v1.RuleWithOperations {
	return rule(g.nonEmpty(genOps, 2), g.nonEmpty(genGroups, 2), g.nonEmpty(genVersions, 2), g.nonEmpty(genResources, 3), g.pick(genScopes))
}

// nonEmpty is a subset that is rarely empty.
func (g gen) nonEmpty(items []string, max int) []string {
	if g.rng.IntN(20) == 0 {
		return nil
	}
	return append(g.subset(items, max-1), g.pick(items))
}

func (g gen) matchPolicy() *v1.MatchPolicyType {
	switch g.rng.IntN(3) {
	case 0:
		return nil
	case 1:
		return ptr(v1.Exact)
	}
	return ptr(v1.Equivalent)
}

func (g gen) selector(key string) *metav1.LabelSelector {
	switch g.rng.IntN(10) {
	case 0:
		return nil
	case 1, 2, 3, 4, 5:
		return &metav1.LabelSelector{}
	case 6:
		return &metav1.LabelSelector{MatchLabels: map[string]string{key: g.pick([]string{"prod", "a"})}}
	case 7:
		return sel(key, metav1.LabelSelectorOpNotIn, g.pick([]string{"prod", "a"}))
	case 8:
		return sel(key, metav1.LabelSelectorOpExists)
	}
	return sel(key, metav1.LabelSelectorOpIn, "bad value")
}

func (g gen) webhook() *v1.ValidatingWebhook {
	h := &v1.ValidatingWebhook{
		MatchPolicy:       g.matchPolicy(),
		NamespaceSelector: g.selector("env"),
		ObjectSelector:    g.selector("app"),
	}
	for range g.rng.IntN(4) {
		h.Rules = append(h.Rules, g.rule())
	}
	return h
}

func (g gen) namedRules(max int) []v1.NamedRuleWithOperations {
	var out []v1.NamedRuleWithOperations
	for range g.rng.IntN(max + 1) {
		out = append(out, named(g.subset(genNames, 1), g.rule()))
	}
	return out
}

func (g gen) matchResources() *v1.MatchResources {
	if g.rng.IntN(12) == 0 {
		return nil
	}
	return &v1.MatchResources{
		MatchPolicy:          g.matchPolicy(),
		NamespaceSelector:    g.selector("env"),
		ObjectSelector:       g.selector("app"),
		ResourceRules:        g.namedRules(3),
		ExcludeResourceRules: g.namedRules(1),
	}
}

type genTarget struct {
	res  schema.GroupVersionResource
	subs []string
	kind schema.GroupVersionKind
}

var genTargets = []genTarget{
	{gvr("", "v1", "pods"), []string{"", "status", "exec"}, gvk("", "v1", "Pod")},
	{gvr("apps", "v1", "deployments"), []string{"", "scale", "status"}, gvk("apps", "v1", "Deployment")},
	{gvr("apps", "v1beta1", "deployments"), []string{"", "scale"}, gvk("apps", "v1beta1", "Deployment")},
	{gvr("extensions", "v1beta1", "deployments"), []string{"", "scale"}, gvk("extensions", "v1beta1", "Deployment")},
	{gvr("", "v1", "namespaces"), []string{"", "", "finalize", "status"}, gvk("", "v1", "Namespace")},
	{gvr("", "v1", "nodes"), []string{""}, gvk("", "v1", "Node")},
	{gvr("example.com", "v2", "widgets"), []string{""}, gvk("example.com", "v2", "Widget")},
	{gvr("example.com", "v1", "widgets"), []string{""}, gvk("example.com", "v1", "Widget")},
}

func (g gen) object(nsWrite bool) runtime.Object {
	switch g.rng.IntN(6) {
	case 0:
		return nil
	case 1:
		return &corev1.NodeProxyOptions{}
	case 2:
		return labelled(nil)
	}
	if nsWrite {
		return namespaceObj("new", map[string]string{"env": g.pick([]string{"prod", "dev"})})
	}
	return labelled(map[string]string{"app": g.pick([]string{"a", "b"})})
}

// attrs draws a request; ok is false for the one shape where upstream's
// real client and its fake differ (a namespace lookup of the empty name).
func (g gen) attrs() (*admission.Attributes, bool) {
	t := genTargets[g.rng.IntN(len(genTargets))]
	op := admission.Operation(g.pick([]string{"CREATE", "UPDATE", "DELETE", "CONNECT"}))
	ns := g.pick([]string{"", "", "prod", "dev", "bare", "missing", "broken"})
	a := attrs(op, ns, g.pick(genNames), t.res, t.subs[g.rng.IntN(len(t.subs))], t.kind)
	nsWrite := t.res.Resource == "namespaces" && a.Subresource == "" && (op == admission.Create || op == admission.Update)
	a.Object, a.OldObject = g.object(nsWrite), g.object(false)
	ok := !(ns == "" && t.res.Resource == "namespaces" && !nsWrite)
	return a, ok
}
