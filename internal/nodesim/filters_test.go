package nodesim

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testNode(name string, mutate ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": "a"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"),
			corev1.ResourcePods: resource.MustParse("3"), "example.com/gpu": resource.MustParse("1"),
		}}}
	for _, m := range mutate {
		m(n)
	}
	return n
}

func testPod(mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func requests(l corev1.ResourceList) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Resources.Requests = l }
}

func hostPort(port int32, ip string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: 80, HostPort: port, HostIP: ip, Protocol: corev1.ProtocolTCP})
	}
}

var cpu = func(q string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
}

// The filters' verdicts, each case against kube-scheduler 1.37's plugin
// of the same name (pkg/scheduler/framework/plugins).
func TestFilter(t *testing.T) {
	tainted := func(key string, effect corev1.TaintEffect) func(*corev1.Node) {
		return func(n *corev1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: "v", Effect: effect})
		}
	}
	cases := []struct {
		name         string
		pod          *corev1.Pod
		node         *corev1.Node
		bound        []*corev1.Pod
		want         string
		unresolvable bool
	}{
		{name: "fits", pod: testPod(), node: testNode("n")},
		{name: "other node name", pod: testPod(func(p *corev1.Pod) { p.Spec.NodeName = "m" }), node: testNode("n"), want: ReasonNodeName, unresolvable: true},
		{name: "unschedulable", pod: testPod(), node: testNode("n", func(n *corev1.Node) { n.Spec.Unschedulable = true }), want: ReasonUnschedulable, unresolvable: true},
		{name: "unschedulable tolerated", node: testNode("n", func(n *corev1.Node) { n.Spec.Unschedulable = true }),
			pod: testPod(func(p *corev1.Pod) {
				p.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
			})},
		{name: "node selector", pod: testPod(func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "b"} }), node: testNode("n"), want: ReasonNodeAffinity, unresolvable: true},
		{name: "node selector matches", pod: testPod(func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "a"} }), node: testNode("n")},
		{name: "required affinity on name", node: testNode("n"), want: ReasonNodeAffinity, unresolvable: true,
			pod: testPod(func(p *corev1.Pod) {
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"m"}}}}}}}}
			})},
		{name: "NoSchedule taint", pod: testPod(), node: testNode("n", tainted("k", corev1.TaintEffectNoSchedule)), want: ReasonTaint, unresolvable: true},
		{name: "NoExecute taint", pod: testPod(), node: testNode("n", tainted("k", corev1.TaintEffectNoExecute)), want: ReasonTaint, unresolvable: true},
		{name: "PreferNoSchedule taint ignored", pod: testPod(), node: testNode("n", tainted("k", corev1.TaintEffectPreferNoSchedule))},
		{name: "taint tolerated", node: testNode("n", tainted("k", corev1.TaintEffectNoSchedule)),
			pod: testPod(func(p *corev1.Pod) {
				p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v"}}
			})},
		{name: "taints before affinity", node: testNode("n", tainted("k", corev1.TaintEffectNoSchedule)),
			pod: testPod(func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "b"} }), want: ReasonTaint, unresolvable: true},
		{name: "ports before resources", pod: testPod(hostPort(8080, ""), requests(cpu("3"))), node: testNode("n"), bound: []*corev1.Pod{testPod(hostPort(8080, ""))}, want: ReasonNodePorts},
		{name: "cpu left", pod: testPod(requests(cpu("1"))), node: testNode("n"), bound: []*corev1.Pod{testPod(requests(cpu("1")))}},
		{name: "cpu short", pod: testPod(requests(cpu("1500m"))), node: testNode("n"), bound: []*corev1.Pod{testPod(requests(cpu("1")))}, want: "Insufficient cpu"},
		{name: "cpu beyond allocatable", pod: testPod(requests(cpu("3"))), node: testNode("n"), want: "Insufficient cpu", unresolvable: true},
		{name: "cpu and memory", node: testNode("n"), unresolvable: true, want: "Insufficient cpu,Insufficient memory",
			pod: testPod(requests(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("5Gi"), corev1.ResourceCPU: resource.MustParse("2500m")}))},
		{name: "extended resource", pod: testPod(requests(corev1.ResourceList{"example.com/gpu": resource.MustParse("2")})), node: testNode("n"), want: "Insufficient example.com/gpu", unresolvable: true},
		{name: "absent extended resource", pod: testPod(requests(corev1.ResourceList{"example.com/fpga": resource.MustParse("1")})), node: testNode("n"), want: "Insufficient example.com/fpga", unresolvable: true},
		{name: "too many pods", pod: testPod(), node: testNode("n"), bound: []*corev1.Pod{testPod(), testPod(), testPod()}, want: ReasonTooManyPods},
		{name: "too many pods and cpu", pod: testPod(requests(cpu("1"))), node: testNode("n"), want: "Too many pods,Insufficient cpu",
			bound: []*corev1.Pod{testPod(requests(cpu("1500m"))), testPod(), testPod()}},
		{name: "init container counts alone", node: testNode("n"), want: "Insufficient cpu", unresolvable: true,
			pod: testPod(requests(cpu("1")), func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: cpu("3")}}}
			})},
		{name: "host port taken", pod: testPod(hostPort(8080, "")), node: testNode("n"), bound: []*corev1.Pod{testPod(hostPort(8080, "10.0.0.1"))}, want: ReasonNodePorts},
		{name: "host port on other IP", pod: testPod(hostPort(8080, "10.0.0.2")), node: testNode("n"), bound: []*corev1.Pod{testPod(hostPort(8080, "10.0.0.1"))}},
		{name: "host port other number", pod: testPod(hostPort(8081, "")), node: testNode("n"), bound: []*corev1.Pod{testPod(hostPort(8080, ""))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Filter(tc.pod, &NodeState{Node: tc.node, Pods: tc.bound})
			if got := strings.Join(v.Reasons, ","); got != tc.want || v.Unresolvable != tc.unresolvable {
				t.Errorf("Filter = %q unresolvable=%v, want %q unresolvable=%v", got, v.Unresolvable, tc.want, tc.unresolvable)
			}
		})
	}
}

func TestFitError(t *testing.T) {
	never := corev1.PreemptNever
	cases := []struct {
		name     string
		pod      *corev1.Pod
		verdicts []Verdict
		want     string
	}{
		{name: "cpu on all", pod: testPod(), verdicts: []Verdict{{Reasons: []string{"Insufficient cpu"}}, {Reasons: []string{"Insufficient cpu"}}},
			want: "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."},
		{name: "mixed", pod: testPod(), verdicts: []Verdict{
			{Reasons: []string{"Insufficient cpu", "Insufficient memory"}},
			{Reasons: []string{ReasonTaint}, Unresolvable: true},
			{Reasons: []string{ReasonNodeAffinity}, Unresolvable: true},
		},
			want: "0/3 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint(s). " +
				"preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."},
		{name: "preemption never", pod: testPod(func(p *corev1.Pod) { p.Spec.PreemptionPolicy = &never }),
			verdicts: []Verdict{{Reasons: []string{"Insufficient cpu"}}},
			want:     "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."},
		{name: "no nodes", pod: testPod(), want: "no nodes available to schedule pods"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := FitError(tc.pod, tc.verdicts); got != tc.want {
				t.Errorf("FitError =\n%q, want\n%q", got, tc.want)
			}
		})
	}
}

// The least-allocated score prefers the emptier node and counts pods
// without requests at the scheduler's defaults.
func TestLeastAllocatedScore(t *testing.T) {
	node := testNode("n", func(n *corev1.Node) {
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1000Mi")}
	})
	empty := LeastAllocatedScore(testPod(), &NodeState{Node: node})
	// cpu (1000-100)*100/1000 = 90, memory (1000-200)*100/1000 = 80.
	if empty != 85 {
		t.Errorf("score on an empty node = %d, want 85", empty)
	}
	busy := LeastAllocatedScore(testPod(), &NodeState{Node: node, Pods: []*corev1.Pod{testPod(requests(cpu("500m")))}})
	// cpu (1000-600)*100/1000 = 40, memory (1000-400)*100/1000 = 60.
	if busy != 50 {
		t.Errorf("score on a busy node = %d, want 50", busy)
	}
}

func TestNormalizeImage(t *testing.T) {
	for in, want := range map[string]string{
		"nginx":                        "docker.io/library/nginx:latest",
		"nginx:1.27":                   "docker.io/library/nginx:1.27",
		"bitnami/redis":                "docker.io/bitnami/redis:latest",
		"registry.k8s.io/pause:3.10":   "registry.k8s.io/pause:3.10",
		"localhost:5000/app":           "localhost:5000/app:latest",
		"nginx@sha256:abc":             "docker.io/library/nginx@sha256:abc",
		"quay.io/org/img:tag@sha256:1": "quay.io/org/img:tag@sha256:1",
	} {
		if got := NormalizeImage(in); got != want {
			t.Errorf("NormalizeImage(%q) = %q, want %q", in, got, want)
		}
	}
}

// Place narrows the nodes by metadata.name affinity first, as
// NodeAffinity's PreFilter, and picks the emptiest node that fits.
func TestPlace(t *testing.T) {
	byName := func(names ...[]string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			var terms []corev1.NodeSelectorTerm
			for _, n := range names {
				terms = append(terms, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: n}}})
			}
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		}
	}
	states := func() []*NodeState {
		return []*NodeState{
			{Node: testNode("a"), Pods: []*corev1.Pod{testPod(requests(cpu("1")))}},
			{Node: testNode("b")},
			{Node: testNode("c", func(n *corev1.Node) { n.Spec.Unschedulable = true })},
		}
	}
	cases := []struct {
		name string
		pod  *corev1.Pod
		best int
		msg  string
	}{
		{name: "emptiest", pod: testPod(), best: 1},
		{name: "named", pod: testPod(byName([]string{"a"})), best: 0},
		{name: "named, not fitting", pod: testPod(byName([]string{"a"}, []string{"c"}), requests(cpu("1500m"))), best: -1,
			msg: "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [NodeAffinity], 1 node(s) were unschedulable. " +
				"preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."},
		{name: "conflicting terms", pod: testPod(func(p *corev1.Pod) {
			byName([]string{"a"})(p)
			p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields = append(
				p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields,
				corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}})
		}), best: -1,
			msg: "0/3 nodes are available: pod affinity terms conflict. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			best, msg := Place(tc.pod, states())
			if best != tc.best || msg != tc.msg {
				t.Errorf("Place = %d, %q, want %d, %q", best, msg, tc.best, tc.msg)
			}
		})
	}
}

// Sums kept by the scheduler's cache decide as sums taken from the pods.
func TestPrecomputedUsage(t *testing.T) {
	bound := []*corev1.Pod{testPod(requests(cpu("1"))), testPod(requests(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("3Gi")}))}
	for _, pod := range []*corev1.Pod{testPod(), testPod(requests(cpu("1500m"))), testPod(requests(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}))} {
		plain := &NodeState{Node: testNode("n"), Pods: bound}
		kept := &NodeState{Node: testNode("n"), Pods: bound}
		for _, p := range bound {
			kept.Add(PodUsage(p))
		}
		a, b := Filter(pod, plain), Filter(pod, kept)
		if strings.Join(a.Reasons, ",") != strings.Join(b.Reasons, ",") || a.Unresolvable != b.Unresolvable {
			t.Errorf("Filter from pods = %+v, from kept sums = %+v", a, b)
		}
		if x, y := LeastAllocatedScore(pod, plain), LeastAllocatedScore(pod, kept); x != y {
			t.Errorf("score from pods = %d, from kept sums = %d", x, y)
		}
	}
}
