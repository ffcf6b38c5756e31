// Package podtolerationrestriction compares admitd's
// PodTolerationRestriction with upstream's plugin: configuration files
// (accepted or refused, with the same error), and the decision, error and
// mutated pod over upstream's test table and generated namespaces, cluster
// configurations and pods, on CREATE and UPDATE.
package podtolerationrestriction

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	upadmission "k8s.io/apiserver/pkg/admission"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/podtolerationrestriction"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/podtolerationrestriction"
	"github.com/admitd/admitd/test/upstream/internal/tolgen"
)

type pair struct {
	ours *ours.Plugin
	up   upadmission.Interface
}

// build returns both plugins over w with the configuration document cfg
// ("" for none), or the two errors.
func build(t *testing.T, w *tolgen.World, cfg string) (pair, error, error) {
	t.Helper()
	var ourR, upR *strings.Reader
	if cfg != "" {
		ourR, upR = strings.NewReader(cfg), strings.NewReader(cfg)
	}
	var up upadmission.Interface
	var upErr error
	if upR != nil {
		up, upErr = w.InitUpstream(t, upstream.Register, upstream.PluginName, upR)
	} else {
		up, upErr = w.InitUpstream(t, upstream.Register, upstream.PluginName, nil)
	}
	if upErr != nil {
		upErr = fmt.Errorf("%s", strings.TrimPrefix(upErr.Error(), `couldn't init admission plugin "PodTolerationRestriction": `))
	}
	var c *ours.Configuration
	var ourErr error
	if ourR != nil {
		c, ourErr = ours.LoadConfiguration(ourR)
	} else {
		c, ourErr = ours.LoadConfiguration(nil)
	}
	if ourErr != nil || upErr != nil {
		return pair{}, ourErr, upErr
	}
	return pair{ours: ours.New(c, w, admission.PluginContext{}.Gates()), up: up}, nil, nil
}

func (p pair) compare(t *testing.T, name string, a *admission.Attributes) {
	t.Helper()
	if got, want := p.ours.Handles(a.Operation), p.up.Handles(upadmission.Operation(a.Operation)); got != want {
		t.Fatalf("%s: Handles(%s) = %v, upstream %v", name, a.Operation, got, want)
	}
	if !p.up.Handles(upadmission.Operation(a.Operation)) {
		return
	}
	// The validating phase alone, on the pod as it came.
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
	// Reinvocation: a second run changes nothing more, for both.
	before := a.Object.DeepCopyObject()
	if err := p.ours.Admit(context.Background(), a); err != nil {
		t.Errorf("%s: second Admit = %v", name, err)
	}
	if !equalObjects(before, a.Object) {
		t.Errorf("%s: second Admit changed the pod", name)
	}
}

func equalObjects(a, b runtime.Object) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func tol(key, value string) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpEqual, Value: value, Effect: corev1.TaintEffectNoSchedule}
}

func annotate(t *testing.T, ts []corev1.Toleration) string {
	b, err := json.Marshal(ts)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func configDoc(t *testing.T, def, white []corev1.Toleration) string {
	b, err := json.Marshal(map[string]any{"apiVersion": "podtolerationrestriction.admission.k8s.io/v1alpha1", "kind": "Configuration", "default": def, "whitelist": white})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Upstream's table (TestPodAdmission), rewritten as inputs: the cluster
// configuration as a configuration file, the namespace's as annotations.
func TestUpstreamTable(t *testing.T) {
	cpu := func(req, lim string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse(lim)}, Requests: corev1.ResourceList{"cpu": resource.MustParse(req)}}
	}
	qos := map[string]corev1.ResourceRequirements{"besteffort": {}, "burstable": cpu("500m", "1"), "guaranteed": cpu("1", "1")}
	for i, tc := range []struct {
		name                        string
		qos                         string
		clusterDefault, nsDefault   []corev1.Toleration
		nsWhitelist, clusterAllowed []corev1.Toleration
		pod                         []corev1.Toleration
	}{
		{name: "default cluster tolerations, empty pod tolerations", qos: "besteffort", clusterDefault: []corev1.Toleration{tol("testKey", "testValue")}, pod: []corev1.Toleration{}},
		{name: "default cluster tolerations with pod tolerations", qos: "besteffort", clusterDefault: []corev1.Toleration{tol("testKey", "testValue")}, nsDefault: []corev1.Toleration{}, pod: []corev1.Toleration{tol("testKey", "testValue")}},
		{name: "namespace tolerations", qos: "besteffort", nsDefault: []corev1.Toleration{tol("testKey", "testValue")}, pod: []corev1.Toleration{tol("testKey", "testValue")}},
		{name: "no pod tolerations", qos: "besteffort", nsDefault: []corev1.Toleration{tol("testKey", "testValue")}, pod: []corev1.Toleration{}},
		{name: "duplicate key pod and namespace tolerations", qos: "besteffort", nsDefault: []corev1.Toleration{tol("testKey", "testValue")}, pod: []corev1.Toleration{tol("testKey", "testValue1")}},
		{name: "cluster default overridden by empty namespace tolerations", qos: "besteffort", clusterDefault: []corev1.Toleration{tol("testKey", "testValue2")}, nsDefault: []corev1.Toleration{}, pod: []corev1.Toleration{tol("testKey", "testValue1")}},
		{name: "merged pod tolerations satisfy whitelist", qos: "besteffort", nsDefault: []corev1.Toleration{tol("testKey", "testValue")}, nsWhitelist: []corev1.Toleration{tol("testKey", "testValue")}, pod: []corev1.Toleration{}},
		{name: "default cluster toleration overridden by empty namespace one", qos: "besteffort", clusterDefault: []corev1.Toleration{tol("testKey", "testValue")}, nsDefault: []corev1.Toleration{}, pod: []corev1.Toleration{}},
		{name: "cluster whitelist overridden by empty namespace whitelist", qos: "besteffort", nsWhitelist: []corev1.Toleration{}, clusterAllowed: []corev1.Toleration{tol("testKey", "testValue1")}, pod: []corev1.Toleration{tol("testKey", "testValue")}},
		{name: "merged pod tolerations conflict with the whitelist", qos: "besteffort", nsDefault: []corev1.Toleration{tol("testKey", "testValue")}, nsWhitelist: []corev1.Toleration{tol("testKey", "testValue1")}, pod: []corev1.Toleration{}},
		{name: "memory pressure for a Burstable pod", qos: "burstable", nsDefault: []corev1.Toleration{tol("testKey", "testValue")}, nsWhitelist: []corev1.Toleration{}, pod: []corev1.Toleration{}},
		{name: "duplicate key tolerations are not modified", qos: "besteffort", nsDefault: []corev1.Toleration{}, nsWhitelist: []corev1.Toleration{}, pod: []corev1.Toleration{tol("testKey", "testValue"), tol("testKey", "testValue1")}},
		{name: "memory pressure for a Guaranteed pod", qos: "guaranteed", nsDefault: []corev1.Toleration{tol("testKey", "testValue")}, nsWhitelist: []corev1.Toleration{}, pod: []corev1.Toleration{}},
		{name: "pod toleration outside the cluster whitelist", qos: "besteffort", clusterAllowed: []corev1.Toleration{tol("testKey", "testValue1")}, pod: []corev1.Toleration{tol("testKey", "testValue")}},
	} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "testNamespace", Annotations: map[string]string{}}}
		if tc.nsDefault != nil {
			ns.Annotations[upstream.NSDefaultTolerations] = annotate(t, tc.nsDefault)
		}
		if tc.nsWhitelist != nil {
			ns.Annotations[upstream.NSWLTolerations] = annotate(t, tc.nsWhitelist)
		}
		p, ourErr, upErr := build(t, tolgen.NewWorld(ns), configDoc(t, tc.clusterDefault, tc.clusterAllowed))
		if ourErr != nil || upErr != nil {
			t.Fatalf("%s: configuration: admitd %v, upstream %v", tc.name, ourErr, upErr)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "testPod", Namespace: "testNamespace"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "test", Resources: qos[tc.qos]}}, Tolerations: tc.pod}}
		p.compare(t, fmt.Sprintf("%d %s", i, tc.name), admissiontest.Create(pod).Attributes())
		p.compare(t, fmt.Sprintf("%d %s (update)", i, tc.name), admissiontest.Update(pod.DeepCopy(), pod).Attributes())
	}
}

// Configuration documents: both accept the same ones with the same
// content, and refuse the others with the same error.
func TestConfiguration(t *testing.T) {
	const head = "apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\nkind: Configuration\n"
	docs := []string{
		"", "{}", "null", "[]", "- a\n", "a: b: c", "{\"apiVersion\": 1,", "\t{", "kind: Configuration\n", "apiVersion: v1\n",
		head, head + "foo: 1\n", head + "default: []\ndefault: [{key: a, operator: Exists}]\n",
		"apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\nkind: Conf\n",
		"apiVersion: podtolerationrestriction.admission.k8s.io/v2\nkind: Configuration\n",
		"apiVersion: foo/v1\nkind: Configuration\n", "apiVersion: foo\nkind: Configuration\n", "apiVersion: a/b/c\nkind: Configuration\n",
		"apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\n",
		head + "default: 5\n", head + "whitelist: {}\n", head + "default: [{tolerationSeconds: x}]\n",
		head + "default: [{key: 'a b', operator: Foo, effect: Bar, value: x, tolerationSeconds: 3}]\nwhitelist: [{operator: Equal}]\n",
		head + "default: [{Key: a}]\n", head + "default: [{key: a, operator: Exists, value: b}, {key: a, operator: Lt, value: '5'}]\n",
		head + "default: [{key: a, value: 'b c'}, {operator: Exists, effect: NoExecute, tolerationSeconds: 5}]\n",
		head + "whitelist: [{key: a, operator: Exists}]\n---\nkind: x\n",
		`{"apiVersion": "podtolerationrestriction.admission.k8s.io/v1alpha1", "kind": "Configuration", "Default": [{"Key": "a"}]}`,
		`{"apiVersion": "podtolerationrestriction.admission.k8s.io/v1alpha1", "kind": "Configuration", "whitelist": [{"key": "a", "operator": "Exists"}], "whitelist": null}`,
	}
	for _, doc := range docs {
		p, ourErr, upErr := build(t, tolgen.NewWorld(), doc)
		if got, want := fmt.Sprint(ourErr), fmt.Sprint(upErr); got != want {
			t.Errorf("configuration %q:\n admitd   = %s\n upstream = %s", doc, got, want)
			continue
		}
		if ourErr != nil {
			continue
		}
		// Same content: a pod with every toleration of the vocabulary is
		// refused or admitted alike, with the same defaults.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}
		p, _, _ = build(t, tolgen.NewWorld(ns), doc)
		r := rand.New(rand.NewSource(4))
		for i := range 30 {
			p.compare(t, fmt.Sprintf("configuration %q pod %d", doc, i), admissiontest.Create(tolgen.Pod(r, "ns")).Attributes())
		}
	}
}

func TestGenerated(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	n := 0
	for world := range 8 {
		var objs []runtime.Object
		for i := range 12 {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("ns", i)}}
			if r.Intn(4) > 0 {
				ns.Annotations = map[string]string{"other": "x"}
				if r.Intn(2) == 0 {
					ns.Annotations[upstream.NSDefaultTolerations] = tolgen.Annotation(r, tolgen.Tolerations(r, 3))
				}
				if r.Intn(2) == 0 {
					ns.Annotations[upstream.NSWLTolerations] = tolgen.Annotation(r, whitelist(r))
				}
			}
			objs = append(objs, ns)
		}
		var cfg string
		if world%4 != 0 {
			cfg = configDoc(t, valid(tolgen.Tolerations(r, 3)), valid(whitelist(r)))
		}
		p, ourErr, upErr := build(t, tolgen.NewWorld(objs...), cfg)
		if fmt.Sprint(ourErr) != fmt.Sprint(upErr) {
			t.Fatalf("configuration %q: admitd %v, upstream %v", cfg, ourErr, upErr)
		}
		if ourErr != nil {
			continue
		}
		for i := range 250 {
			ns := fmt.Sprint("ns", r.Intn(13)) // ns12 does not exist
			pod := tolgen.Pod(r, ns)
			a := admissiontest.Create(pod).Attributes()
			if r.Intn(3) == 0 {
				a = admissiontest.Update(pod, tolgen.Pod(r, ns)).Attributes()
			}
			p.compare(t, fmt.Sprintf("world %d (config %q) pod %d in %s %s: %v", world, cfg, i, ns, a.Operation, pod.Spec.Tolerations), a)
			n++
		}
	}
	t.Logf("%d generated requests", n)
}

// whitelist is a whitelist that often covers the generated tolerations.
func whitelist(r *rand.Rand) []corev1.Toleration {
	ts := tolgen.Tolerations(r, 4)
	if r.Intn(3) == 0 {
		ts = append(ts, corev1.Toleration{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	if r.Intn(5) == 0 {
		ts = append(ts, corev1.Toleration{Operator: corev1.TolerationOpExists})
	}
	return ts
}

// valid keeps the tolerations a configuration file may hold.
func valid(ts []corev1.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range ts {
		if (t.Key == "" && t.Operator != corev1.TolerationOpExists) || (t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute) ||
			t.Operator == corev1.TolerationOpLt || (t.Operator == corev1.TolerationOpExists && t.Value != "") {
			continue
		}
		out = append(out, t)
	}
	return out
}
