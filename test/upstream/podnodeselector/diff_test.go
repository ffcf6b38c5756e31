// Package podnodeselector compares admitd's PodNodeSelector with
// upstream's plugin: the legacy configuration file, and the decision, error
// and mutated pod of both phases over upstream's test table and generated
// namespaces, configurations and pods.
package podnodeselector

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/podnodeselector"
	"sigs.k8s.io/yaml"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/podnodeselector"
	"github.com/admitd/admitd/test/upstream/internal/tolgen"
)

type pair struct {
	ours *ours.Plugin
	up   upadmission.Interface
}

// build returns both plugins over w with the configuration file cfg ("":
// none).
func build(t *testing.T, w *tolgen.World, cfg string) pair {
	t.Helper()
	var up upadmission.Interface
	var err error
	var sel map[string]string
	if cfg == "" {
		up, err = w.InitUpstream(t, upstream.Register, upstream.PluginName, nil)
		sel = ours.ReadConfiguration(nil)
	} else {
		up, err = w.InitUpstream(t, upstream.Register, upstream.PluginName, strings.NewReader(cfg))
		sel = ours.ReadConfiguration(strings.NewReader(cfg))
	}
	if err != nil {
		t.Fatal(err)
	}
	return pair{ours: ours.New(sel, w), up: up}
}

func (p pair) compare(t *testing.T, name string, a *admission.Attributes) {
	t.Helper()
	if got, want := p.ours.Handles(a.Operation), p.up.Handles(upadmission.Operation(a.Operation)); got != want {
		t.Fatalf("%s: Handles(%s) = %v, upstream %v", name, a.Operation, got, want)
	}
	if !p.up.Handles(upadmission.Operation(a.Operation)) {
		return
	}
	va := *a
	va.Object = a.Object.DeepCopyObject()
	ourV := p.ours.Validate(context.Background(), &va)
	upV := p.up.(upadmission.ValidationInterface).Validate(context.Background(), tolgen.Upstream(t, &va), nil)
	if got, want := tolgen.Describe(ourV), tolgen.Describe(upV); got != want {
		t.Errorf("%s: Validate:\n admitd   = %s\n upstream = %s", name, got, want)
	}
	ua := tolgen.Upstream(t, a)
	upErr := p.up.(upadmission.MutationInterface).Admit(context.Background(), ua, nil)
	ourErr := p.ours.Admit(context.Background(), a)
	if !tolgen.Same(t, name, ourErr, upErr, tolgen.RoundTrip(t, a.Object), tolgen.ToV1(t, ua.GetObject(), corev1.SchemeGroupVersion)) || ourErr != nil {
		return
	}
	if err := p.ours.Admit(context.Background(), a); err != nil {
		t.Errorf("%s: second Admit (reinvocation) = %v", name, err)
	}
}

func config(t *testing.T, m map[string]string) string {
	b, err := yaml.Marshal(map[string]any{"podNodeSelectorPluginConfig": m})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Upstream's table (TestPodAdmission), rewritten as inputs; the namespace
// annotation of a case that ignores it is the previous case's, as in
// upstream's loop.
func TestUpstreamTable(t *testing.T) {
	annotation := (*string)(nil)
	str := func(s string) *string { return &s }
	for i, tc := range []struct {
		name                      string
		clusterDefault, whitelist string
		ns                        *string
		keepNS                    bool
		pod                       map[string]string
	}{
		{name: "No node selectors", keepNS: true, pod: map[string]string{}},
		{name: "Default node selector and no conflicts", clusterDefault: "infra = false", keepNS: true, pod: map[string]string{}},
		{name: "namespace selector with whitespace", ns: str(" infra = false "), pod: map[string]string{}},
		{name: "Default and namespace node selector", clusterDefault: "infra = false", ns: str("infra=true"), pod: map[string]string{}},
		{name: "Empty namespace node selector", clusterDefault: "infra = false", ns: str(""), pod: map[string]string{}},
		{name: "namespace and pod node selector", clusterDefault: "infra = false", ns: str("infra=true"), pod: map[string]string{"env": "test"}},
		{name: "Conflicting, one label", clusterDefault: "env = test", ns: str("infra=true"), pod: map[string]string{"infra": "false"}},
		{name: "Conflicting, multiple labels", clusterDefault: "env=dev", ns: str("infra=false, env = test"), pod: map[string]string{"env": "dev", "color": "blue"}},
		{name: "Merged selectors satisfy the whitelist", clusterDefault: "env=dev", ns: str("infra=false, env = dev"), whitelist: "env=dev, infra=false, color=blue", pod: map[string]string{"env": "dev", "color": "blue"}},
		{name: "Merged selectors conflict with the whitelist", clusterDefault: "env=dev", ns: str("infra=false, env = dev"), whitelist: "env=dev, infra=true, color=blue", pod: map[string]string{"env": "dev", "color": "blue"}},
		{name: "Default node selector conflict with the whitelist", clusterDefault: "env=dev", keepNS: true, whitelist: "env=prd", pod: map[string]string{}},
		{name: "Default node selector conflict with the whitelist, no annotation", clusterDefault: "env=dev", whitelist: "env=prd", pod: map[string]string{}},
	} {
		if !tc.keepNS {
			annotation = tc.ns
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "testNamespace"}}
		if annotation != nil {
			ns.Annotations = map[string]string{upstream.NamespaceNodeSelectors[0]: *annotation}
		}
		p := build(t, tolgen.NewWorld(ns), config(t, map[string]string{"clusterDefaultNodeSelector": tc.clusterDefault, "testNamespace": tc.whitelist}))
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "testPod", Namespace: "testNamespace"}, Spec: corev1.PodSpec{NodeSelector: tc.pod}}
		p.compare(t, fmt.Sprintf("%d %s", i, tc.name), admissiontest.Create(pod).Attributes())
	}
	p := build(t, tolgen.NewWorld(), "")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "testPod", Namespace: "gone"}}
	p.compare(t, "missing namespace", admissiontest.Create(pod).Attributes())
	p.compare(t, "update", admissiontest.Update(pod, pod.DeepCopy()).Attributes())
	p.compare(t, "pods/binding", admissiontest.Create(pod).Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "binding").Attributes())
}

// Configuration files (none of them malformed JSON, on which upstream
// loops forever): the same selectors are read.
func TestConfiguration(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns1"}}
	for _, cfg := range []string{
		"podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n  ns1: env=prod,zone=a\n",
		"PodNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n",
		"podnodeselectorpluginconfig:\n  clusterDefaultNodeSelector: env=prod\n",
		"podNodeSelectorPluginConfig: 5\n---\npodNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=a\n",
		"podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=a\n---\npodNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=b\n",
		"podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: y\n",
		"podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: 5\n  ns1: env=b\n",
		"other: 1\n", "{}", `{"podNodeSelectorPluginConfig": {"ns1": "env=b"}}`,
		"podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: 'a=b=c'\n",
		"apiVersion: v1\nkind: Foo\npodNodeSelectorPluginConfig:\n  ns1: zone=a\n",
	} {
		p := build(t, tolgen.NewWorld(ns), cfg)
		r := rand.New(rand.NewSource(6))
		for i := range 30 {
			p.compare(t, fmt.Sprintf("configuration %q pod %d", cfg, i), admissiontest.Create(tolgen.Pod(r, "ns1")).Attributes())
		}
	}
}

func TestGenerated(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	n := 0
	for world := range 8 {
		var objs []runtime.Object
		for i := range 10 {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("ns", i)}}
			if r.Intn(3) > 0 {
				ns.Annotations = map[string]string{"other": "x"}
				if r.Intn(3) > 0 {
					ns.Annotations[upstream.NamespaceNodeSelectors[0]] = tolgen.SelectorString(r)
				}
			}
			objs = append(objs, ns)
		}
		cfg := ""
		if world%4 != 0 {
			m := map[string]string{}
			if r.Intn(3) > 0 {
				m["clusterDefaultNodeSelector"] = tolgen.SelectorString(r)
			}
			for range r.Intn(6) {
				m[fmt.Sprint("ns", r.Intn(11))] = tolgen.SelectorString(r)
			}
			cfg = config(t, m)
		}
		p := build(t, tolgen.NewWorld(objs...), cfg)
		for i := range 250 {
			ns := fmt.Sprint("ns", r.Intn(11)) // ns10 does not exist
			pod := tolgen.Pod(r, ns)
			p.compare(t, fmt.Sprintf("world %d (config %q) pod %d in %s: %v", world, cfg, i, ns, pod.Spec.NodeSelector), admissiontest.Create(pod).Attributes())
			n++
		}
	}
	t.Logf("%d generated requests", n)
}
