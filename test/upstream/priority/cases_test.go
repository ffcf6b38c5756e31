package priority

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
)

func class(name string, value int32, globalDefault bool, policy *corev1.PreemptionPolicy) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: globalDefault, PreemptionPolicy: policy}
}

var (
	never           = corev1.PreemptNever
	lower           = corev1.PreemptLowerPriority
	defaultClass1   = class("default1", 1000, true, nil)
	defaultClass2   = class("default2", 2000, true, nil)
	nondefault1     = class("nondefault1", 2000, false, nil)
	clusterCritical = class("system-cluster-critical", 2000000000, true, nil)
	neverClass      = class("nopreemptionpolicy", 2000, true, &never)
	lowerClass      = class("nopreemptionpolicy", 2000, true, &lower)
	systemTest      = class("system-test", 1000000001, false, nil)
)

func pod(namespace, name string, edit ...func(*corev1.PodSpec)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "container", Image: "i"}}}}
	for _, e := range edit {
		e(&p.Spec)
	}
	return p
}

func className(n string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) { s.PriorityClassName = n }
}
func priority(v int32) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) { s.Priority = ptr.To(v) }
}
func policy(v corev1.PreemptionPolicy) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) { s.PreemptionPolicy = ptr.To(v) }
}

func mirror(p *corev1.Pod) *corev1.Pod {
	p.Annotations = map[string]string{"kubernetes.io/config.mirror": ""}
	return p
}

func createPod(name string, p *corev1.Pod) request {
	return request{name: name, op: admission.Create, gvr: podsGVR, obj: p}
}

func classWrite(name string, op admission.Operation, pc *schedulingv1.PriorityClass) request {
	r := request{name: name, op: op, gvr: classesGVR, obj: pc}
	if op == admission.Update {
		r.old = pc
	}
	if op == admission.Delete {
		r.obj, r.old = nil, pc
	}
	return r
}

type worldCase struct {
	classes  []*schedulingv1.PriorityClass
	requests []request
}

// upstreamCases are the cases of upstream's TestPriorityClassAdmission,
// TestDefaultPriority and TestPodAdmission, each in its world.
func upstreamCases() []worldCase {
	const sys = "kube-system"
	updatedDefault1 := defaultClass1.DeepCopy()
	updatedDefault1.GlobalDefault = false
	return []worldCase{
		{nil, []request{
			classWrite("create operator with default class", admission.Create, defaultClass1),
			classWrite("create operator with system name and value", admission.Create, systemTest),
			classWrite("update operator with default class", admission.Update, defaultClass1),
			classWrite("update operator with system name and value", admission.Update, systemTest),
			classWrite("delete operation with default class", admission.Delete, defaultClass1),
			createPod("pod without priority class and no existing priority class", pod("namespace", "pod-wo-priorityclass")),
			createPod("pod with integer priority", pod("namespace", "pod-w-integer-priority", className("default1"), priority(1000))),
			createPod("mirror pod with integer priority", mirror(pod("namespace", "mirror-pod-w-integer-priority", className("default1"), priority(1000)))),
		}},
		{[]*schedulingv1.PriorityClass{defaultClass1}, []request{
			classWrite("create operator with one existing default class", admission.Create, defaultClass2),
			classWrite("update operator with one existing default class", admission.Update, defaultClass2),
			classWrite("update default class and remove its global default", admission.Update, updatedDefault1),
			classWrite("delete default priority class", admission.Delete, defaultClass1),
			createPod("Pod without priority class", pod("namespace", "pod-wo-priorityclass")),
		}},
		{[]*schedulingv1.PriorityClass{nondefault1}, []request{
			classWrite("add a default class", admission.Create, defaultClass1),
			createPod("pod without priority class and no default class", pod("namespace", "pod-wo-priorityclass")),
			createPod("pod with priority that matches computed priority", pod("non-system-namespace", "pod-w-zero-priority", priority(0))),
		}},
		{[]*schedulingv1.PriorityClass{defaultClass1, defaultClass2}, []request{
			createPod("multiple default classes resolves to the minimum value among them", pod("namespace", "p")),
		}},
		{[]*schedulingv1.PriorityClass{defaultClass1, nondefault1}, []request{
			createPod("Pod with priority class", pod("namespace", "pod-w-priorityclass", className("default1"))),
			createPod("Pod with non-existing priority class", pod("namespace", "pod-w-non-existing-priorityclass", className("non-existing"))),
		}},
		{[]*schedulingv1.PriorityClass{clusterCritical}, []request{
			createPod("pod with a system priority class", pod(sys, "pod-w-system-priority", className("system-cluster-critical"))),
			createPod("mirror pod with system priority class", mirror(pod(sys, "mirror-pod-w-system-priority", className("system-cluster-critical")))),
			createPod("pod with system critical priority in non-system namespace", pod("non-system-namespace", "pod-w-system-priority-in-nonsystem-namespace", className("system-cluster-critical"))),
			createPod("pod with priority that matches resolved priority", pod(sys, "pod-w-priority-matching-resolved-default-priority", className("system-cluster-critical"), priority(2000000000))),
		}},
		{[]*schedulingv1.PriorityClass{defaultClass2}, []request{
			createPod("pod with priority that matches default priority", pod("non-system-namespace", "p", priority(2000))),
		}},
		{[]*schedulingv1.PriorityClass{lowerClass}, []request{
			createPod("pod with nil preemption policy", pod(sys, "p", className("nopreemptionpolicy"), priority(2000))),
			createPod("pod with preemption policy that matches", pod(sys, "p", className("nopreemptionpolicy"), priority(2000), policy(lower))),
			createPod("pod with preemption policy that does not match", pod(sys, "p", className("nopreemptionpolicy"), priority(2000), policy(never))),
		}},
		{[]*schedulingv1.PriorityClass{neverClass}, []request{
			createPod("pod without class takes Never from the default", pod(sys, "p")),
			createPod("pod with PreemptLowerPriority against Never", pod(sys, "p", policy(lower))),
		}},
	}
}

func TestUpstreamCases(t *testing.T) {
	for _, wc := range upstreamCases() {
		w := newWorld(t, wc.classes...)
		for _, r := range wc.requests {
			w.compare(t, r)
		}
	}
}

type gen struct{ r *rand.Rand }

func (g gen) chance(p float64) bool { return g.r.Float64() < p }

func (g gen) policy() *corev1.PreemptionPolicy {
	switch g.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return &never
	case 2:
		return ptr.To(corev1.PreemptionPolicy("Other"))
	}
	return &lower
}

// classes makes up to five classes of distinct values (upstream breaks a
// tie between default classes of equal value by informer order).
func (g gen) classes() []*schedulingv1.PriorityClass {
	var out []*schedulingv1.PriorityClass
	values := g.r.Perm(20)
	for i := range g.r.IntN(6) {
		pc := class(fmt.Sprintf("pc%d", i), int32(values[i]*100-500), g.chance(0.4), g.policy())
		if g.chance(0.2) {
			pc.Value = 2000000000 + int32(i)*1000
		}
		out = append(out, pc)
	}
	return out
}

func (g gen) podSpec(classes []*schedulingv1.PriorityClass) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		switch n := g.r.IntN(5); {
		case n == 0 || len(classes) == 0:
			s.PriorityClassName = []string{"", "missing", "system-node-critical"}[g.r.IntN(3)]
		case n == 1:
		default:
			s.PriorityClassName = classes[g.r.IntN(len(classes))].Name
		}
		if g.chance(0.4) {
			vals := []int32{0, 5, 2000000000}
			for _, pc := range classes {
				vals = append(vals, pc.Value)
			}
			s.Priority = ptr.To(vals[g.r.IntN(len(vals))])
		}
		s.PreemptionPolicy = g.policy()
	}
}

func (g gen) requests(classes []*schedulingv1.PriorityClass) []request {
	var rs []request
	for range 8 {
		p := pod("ns", "p", g.podSpec(classes))
		switch n := g.r.IntN(10); {
		case n < 6:
			rs = append(rs, createPod("generated pod create", p))
		case n < 8:
			rs = append(rs, request{name: "generated pod update", op: admission.Update, gvr: podsGVR, obj: p, old: pod("ns", "p", g.podSpec(classes))})
		case n < 9:
			rs = append(rs, request{name: "generated pod subresource", op: admission.Create, gvr: podsGVR, subresource: "binding", obj: p})
		default:
			rs = append(rs, request{name: "generated pod delete", op: admission.Delete, gvr: podsGVR, old: p})
		}
	}
	for range 3 {
		pc := class(fmt.Sprintf("pc%d", g.r.IntN(7)), int32(g.r.IntN(3000)), g.chance(0.6), g.policy())
		op := []admission.Operation{admission.Create, admission.Update, admission.Delete}[g.r.IntN(3)]
		rs = append(rs, classWrite("generated class write", op, pc))
	}
	return rs
}

const generatedWorlds = 400

func TestGenerated(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(3, 4))}
	outcomes := map[string]int{}
	n := 0
	for range generatedWorlds {
		classes := g.classes()
		w := newWorld(t, classes...)
		for _, r := range g.requests(classes) {
			outcomes[w.compare(t, r)]++
			n++
		}
	}
	if len(outcomes) < 40 {
		t.Errorf("%d distinct outcomes, want at least 40", len(outcomes))
	}
	t.Logf("%d generated requests in %d worlds compared, %d distinct outcomes", n, generatedWorlds, len(outcomes))
	if testing.Verbose() {
		for o, c := range outcomes {
			t.Logf("%4d %s", c, o)
		}
	}
}
