// Package runtimeclass compares admitd's RuntimeClass plugin with
// upstream's: the decision, error and mutated pod of both phases over
// upstream's test tables and generated RuntimeClasses and pods.
package runtimeclass

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	upstream "k8s.io/kubernetes/plugin/pkg/admission/runtimeclass"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	ours "github.com/admitd/admitd/pkg/admission/plugins/runtimeclass"
	"github.com/admitd/admitd/test/upstream/internal/tolgen"
)

type pair struct {
	ours    *ours.Plugin
	up      upadmission.Interface
	classes map[string]*nodev1.RuntimeClass
}

func build(t *testing.T, classes ...*nodev1.RuntimeClass) pair {
	t.Helper()
	var objs []runtime.Object
	byName := map[string]*nodev1.RuntimeClass{}
	for _, c := range classes {
		objs = append(objs, c)
		byName[c.Name] = c
	}
	w := tolgen.NewWorld(objs...)
	up, err := w.InitUpstream(t, upstream.Register, upstream.PluginName, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pair{ours: ours.New(w), up: up, classes: byName}
}

// conflicts are the messages upstream may give for pod: it reports the
// first conflicting key in map order.
func (p pair) conflicts(pod *corev1.Pod) []string {
	if pod.Spec.RuntimeClassName == nil || pod.Spec.NodeSelector == nil {
		return nil
	}
	rc := p.classes[*pod.Spec.RuntimeClassName]
	if rc == nil || rc.Scheduling == nil {
		return nil
	}
	var out []string
	for k, v := range rc.Scheduling.NodeSelector {
		if pv, ok := pod.Spec.NodeSelector[k]; ok && pv != v {
			out = append(out, fmt.Sprintf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, pv))
		}
	}
	sort.Strings(out)
	return out
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
	pod, _ := a.Object.(*corev1.Pod)
	var conflicts []string
	if pod != nil {
		conflicts = p.conflicts(pod)
	}
	ua := tolgen.Upstream(t, a)
	upErr := p.up.(upadmission.MutationInterface).Admit(context.Background(), ua, nil)
	ourErr := p.ours.Admit(context.Background(), a)
	if len(conflicts) > 1 && ourErr != nil && upErr != nil && strings.Contains(upErr.Error(), "conflict: runtimeClass") {
		// Several conflicting keys: upstream names any one of them.
		if !oneOf(ourErr.Error(), conflicts) || !oneOf(upErr.Error(), conflicts) {
			t.Errorf("%s: conflict messages admitd %q, upstream %q; want one of %q", name, ourErr, upErr, conflicts)
		}
		return
	}
	if !tolgen.Same(t, name, ourErr, upErr, tolgen.RoundTrip(t, a.Object), tolgen.ToV1(t, ua.GetObject(), corev1.SchemeGroupVersion)) || ourErr != nil {
		return
	}
	// The validating phase after the mutating one admits what it set.
	ourV = p.ours.Validate(context.Background(), a)
	upV = p.up.(upadmission.ValidationInterface).Validate(context.Background(), ua, nil)
	if got, want := tolgen.Describe(ourV), tolgen.Describe(upV); got != want {
		t.Errorf("%s: Validate after Admit:\n admitd   = %s\n upstream = %s", name, got, want)
	}
}

func oneOf(msg string, suffixes []string) bool {
	for _, s := range suffixes {
		if strings.HasSuffix(msg, s) {
			return true
		}
	}
	return false
}

func list(cpu, mem string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
}

func class(name string, overhead corev1.ResourceList, sched *nodev1.Scheduling) *nodev1.RuntimeClass {
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: "bar", Scheduling: sched}
	if overhead != nil {
		rc.Overhead = &nodev1.Overhead{PodFixed: overhead}
	}
	return rc
}

func pod(rc string, overhead corev1.ResourceList, sel map[string]string, ts []corev1.Toleration) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "test"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}, Overhead: overhead, NodeSelector: sel, Tolerations: ts}}
	if rc != "" {
		p.Spec.RuntimeClassName = &rc
	}
	return p
}

// Upstream's tables (TestSetOverhead, TestSetScheduling, TestAdmit,
// TestValidate), rewritten as inputs.
func TestUpstreamTable(t *testing.T) {
	p := build(t,
		class("ovh", list("100m", "1"), nil),
		class("ovh-big", list("10", "10G"), nil),
		class("nilsched", nil, nil),
		class("conflict", nil, &nodev1.Scheduling{NodeSelector: map[string]string{"foo": "conflict"}}),
		class("foobar", nil, &nodev1.Scheduling{NodeSelector: map[string]string{"foo": "bar"}}),
		class("fizz", nil, &nodev1.Scheduling{NodeSelector: map[string]string{"foo": "bar", "fizz": "buzz"}}),
		class("tols", nil, &nodev1.Scheduling{Tolerations: []corev1.Toleration{
			{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoSchedule},
			{Key: "fizz", Operator: corev1.TolerationOpEqual, Value: "buzz", Effect: corev1.TaintEffectNoSchedule}}}),
		class("empty-overhead", corev1.ResourceList{}, nil),
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "nil-podfixed"}, Handler: "bar", Overhead: &nodev1.Overhead{}},
	)
	guaranteed := pod("ovh", nil, nil, nil)
	guaranteed.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: list("1", "10"), Requests: list("1", "10")}
	for name, po := range map[string]*corev1.Pod{
		"overhead, no container requirements":            pod("ovh", nil, nil, nil),
		"overhead, guaranteed pod":                       guaranteed,
		"overhead, differing overhead already set":       pod("ovh-big", list("100m", "1"), nil, nil),
		"overhead, same overhead already set":            pod("ovh", list("0.1", "1"), nil, nil),
		"scheduling, nil scheduling":                     pod("nilsched", nil, map[string]string{"foo": "bar"}, []corev1.Toleration{}),
		"scheduling, conflict node selector":             pod("conflict", nil, map[string]string{"foo": "bar"}, []corev1.Toleration{}),
		"scheduling, nil node selector":                  pod("foobar", nil, nil, nil),
		"scheduling, same key value":                     pod("foobar", nil, map[string]string{"foo": "bar"}, nil),
		"scheduling, different key value":                pod("fizz", nil, map[string]string{"foo": "bar"}, nil),
		"scheduling, multiple tolerations":               pod("tols", nil, nil, []corev1.Toleration{{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoSchedule}}),
		"runtimeClass found":                             pod("ovh", nil, nil, nil),
		"runtimeClass not found":                         pod("nope", nil, nil, nil),
		"no RuntimeClass, overhead set":                  pod("", list("100m", "1"), nil, nil),
		"RuntimeClass without overhead, overhead in pod": pod("nilsched", list("100m", "1"), nil, nil),
		"non-matching overheads":                         pod("ovh", list("10", "10G"), nil, nil),
		"empty class overhead, empty pod overhead":       pod("empty-overhead", corev1.ResourceList{}, nil, nil),
		"nil podFixed":                                   pod("nil-podfixed", nil, nil, nil),
		"nil podFixed, overhead set":                     pod("nil-podfixed", list("1", "1"), nil, nil),
	} {
		p.compare(t, name, admissiontest.Create(po).Attributes())
	}
	p.compare(t, "update", admissiontest.Update(pod("nope", nil, nil, nil), pod("", nil, nil, nil)).Attributes())
	p.compare(t, "pods/status", admissiontest.Create(pod("nope", nil, nil, nil)).Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "status").Attributes())
}

func TestGenerated(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	overheads := []corev1.ResourceList{nil, {}, list("100m", "20Mi"), list("0.1", "20Mi"), list("1", "1Gi"), {corev1.ResourceCPU: resource.MustParse("1")}}
	n := 0
	for world := range 6 {
		var classes []*nodev1.RuntimeClass
		for i := range 6 {
			c := class(fmt.Sprint("rc", i), overheads[r.Intn(len(overheads))], nil)
			if r.Intn(6) == 0 {
				c.Overhead = &nodev1.Overhead{}
			}
			if r.Intn(3) > 0 {
				c.Scheduling = &nodev1.Scheduling{NodeSelector: tolgen.Selector(r), Tolerations: tolgen.Tolerations(r, 3)}
			}
			classes = append(classes, c)
		}
		p := build(t, classes...)
		for i := range 300 {
			po := tolgen.Pod(r, "ns")
			if name := fmt.Sprint("rc", r.Intn(8)); r.Intn(6) > 0 { // rc6, rc7 do not exist
				po.Spec.RuntimeClassName = &name
			}
			if r.Intn(3) == 0 {
				po.Spec.Overhead = overheads[r.Intn(len(overheads))]
			}
			p.compare(t, fmt.Sprintf("world %d pod %d: %v", world, i, po.Spec), admissiontest.Create(po).Attributes())
			n++
		}
	}
	t.Logf("%d generated requests", n)
}
