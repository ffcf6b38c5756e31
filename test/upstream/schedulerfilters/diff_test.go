// Package schedulerfilters compares internal/nodesim's node filters with
// kube-scheduler 1.37's own filter plugins (NodeName, NodeUnschedulable,
// TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit), run as the
// framework runs them for one node: each plugin's PreFilter (a Skip
// leaves out its Filter), then the Filters in the default profile's order
// until the first that rejects the node.
package schedulerfilters

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodename"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeports"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeunschedulable"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/tainttoleration"

	"github.com/admitd/admitd/internal/nodesim"
)

// upstreamPlugins are the filter plugins in the default profile's order,
// with kube-scheduler 1.37's default features (pod-level resources and
// in-place resize on).
func upstreamPlugins(t *testing.T) []fwk.FilterPlugin {
	t.Helper()
	ctx := context.Background()
	fts := feature.Features{EnablePodLevelResources: true, EnableInPlacePodVerticalScaling: true}
	fitArgs := &config.NodeResourcesFitArgs{ScoringStrategy: &config.ScoringStrategy{Type: config.LeastAllocated,
		Resources: []config.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}}}
	type factory func(context.Context, runtime.Object, fwk.Handle, feature.Features) (fwk.Plugin, error)
	var out []fwk.FilterPlugin
	for _, f := range []struct {
		new  factory
		args runtime.Object
	}{
		{nodename.New, nil}, {nodeunschedulable.New, nil}, {tainttoleration.New, nil},
		{nodeaffinity.New, &config.NodeAffinityArgs{}}, {nodeports.New, nil}, {noderesources.NewFit, fitArgs},
	} {
		p, err := f.new(ctx, f.args, nil, fts)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.(fwk.FilterPlugin))
	}
	return out
}

// upstreamVerdict runs the plugins for pod on node as the framework does
// for one node.
func upstreamVerdict(plugins []fwk.FilterPlugin, pod *corev1.Pod, node *corev1.Node, bound []*corev1.Pod) nodesim.Verdict {
	ctx := context.Background()
	ni := framework.NewNodeInfo(bound...)
	ni.SetNode(node)
	state := framework.NewCycleState()
	for _, p := range plugins {
		if pf, ok := p.(fwk.PreFilterPlugin); ok {
			if _, s := pf.PreFilter(ctx, state, pod, []fwk.NodeInfo{ni}); s.IsSkip() {
				continue
			}
		}
		if s := p.Filter(ctx, state, pod, ni); !s.IsSuccess() {
			return nodesim.Verdict{Reasons: s.Reasons(), Unresolvable: s.Code() == fwk.UnschedulableAndUnresolvable}
		}
	}
	return nodesim.Verdict{}
}

func TestFiltersAsUpstream(t *testing.T) {
	plugins := upstreamPlugins(t)
	r := rand.New(rand.NewPCG(7, 26))
	const cases = 20000
	fits, mismatches := 0, 0
	reasons := map[string]int{}
	for i := range cases {
		node, bound, pod := genNode(r), genBound(r), genPod(r)
		want := upstreamVerdict(plugins, pod, node, bound)
		got := nodesim.Filter(pod, &nodesim.NodeState{Node: node, Pods: bound})
		if want.Fits() {
			fits++
		}
		for _, reason := range want.Reasons {
			reasons[reason]++
		}
		// Upstream lists insufficient scalar resources in map order.
		slices.Sort(want.Reasons)
		slices.Sort(got.Reasons)
		if !slices.Equal(got.Reasons, want.Reasons) || got.Unresolvable != want.Unresolvable {
			mismatches++
			if mismatches <= 10 {
				t.Errorf("case %d: admitd %+v, upstream %+v\npod %s\nnode %s\nbound %s", i, got, want, show(pod), show(node), show(bound))
			}
		}
	}
	t.Logf("%d cases, %d fit, %d mismatches; reasons: %v", cases, fits, mismatches, reasons)
	if fits < cases/20 || len(reasons) < 12 || reasons[nodesim.ReasonNodePorts] < 100 {
		t.Errorf("the generator covers too little: %d fits, reasons %v", fits, reasons)
	}
}

func show(v any) string { return strings.ReplaceAll(fmt.Sprintf("%+v", v), "\n", " ") }

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func q(s string) resource.Quantity { return resource.MustParse(s) }

func genNode(r *rand.Rand) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: pick(r, "n1", "n2"), Labels: map[string]string{}}}
	if r.IntN(2) == 0 {
		n.Labels["zone"] = pick(r, "a", "b")
	}
	if r.IntN(2) == 0 {
		n.Labels["cores"] = pick(r, "4", "16", "x")
	}
	n.Status.Allocatable = corev1.ResourceList{
		corev1.ResourceCPU: q(pick(r, "1", "2", "32", "1500m")), corev1.ResourceMemory: q(pick(r, "1Gi", "4Gi", "256Gi")),
		corev1.ResourcePods: q(pick(r, "1", "2", "110")),
	}
	if r.IntN(2) == 0 {
		n.Status.Allocatable[corev1.ResourceEphemeralStorage] = q(pick(r, "1Gi", "100Gi"))
	}
	if r.IntN(2) == 0 {
		n.Status.Allocatable["example.com/gpu"] = q(pick(r, "0", "1", "4"))
	}
	if r.IntN(3) == 0 {
		n.Status.Allocatable["hugepages-2Mi"] = q(pick(r, "0", "64Mi"))
	}
	n.Spec.Unschedulable = r.IntN(8) == 0
	for range r.IntN(3) * r.IntN(2) {
		n.Spec.Taints = append(n.Spec.Taints, pick(r,
			corev1.Taint{Key: "k1", Value: "v1", Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: "k2", Effect: corev1.TaintEffectNoExecute},
			corev1.Taint{Key: "k3", Value: "v", Effect: corev1.TaintEffectPreferNoSchedule},
			corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: "k4", Value: "5", Effect: corev1.TaintEffectNoSchedule}))
	}
	return n
}

func genBound(r *rand.Rand) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range r.IntN(3) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("b%d", i), Namespace: "ns", UID: "u"},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{genContainer(r, "c")}}}
		out = append(out, p)
	}
	return out
}

func genContainer(r *rand.Rand, name string) corev1.Container {
	c := corev1.Container{Name: name, Image: "i"}
	if r.IntN(4) > 0 {
		c.Resources.Requests = corev1.ResourceList{}
		if r.IntN(2) == 0 {
			c.Resources.Requests[corev1.ResourceCPU] = q(pick(r, "0", "100m", "1", "3", "1500m"))
		}
		if r.IntN(2) == 0 {
			c.Resources.Requests[corev1.ResourceMemory] = q(pick(r, "0", "200Mi", "2Gi", "300Gi"))
		}
		if r.IntN(4) == 0 {
			c.Resources.Requests[corev1.ResourceEphemeralStorage] = q(pick(r, "1Gi", "10Gi", "200Gi"))
		}
		if r.IntN(4) == 0 {
			c.Resources.Requests["example.com/gpu"] = q(pick(r, "1", "2"))
		}
		if r.IntN(8) == 0 {
			c.Resources.Requests["example.com/fpga"] = q("1")
		}
		if r.IntN(8) == 0 {
			c.Resources.Requests["hugepages-2Mi"] = q(pick(r, "2Mi", "128Mi"))
		}
	}
	if r.IntN(3) == 0 {
		c.Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: pick(r, int32(0), 8080, 8081),
			HostIP: pick(r, "", "0.0.0.0", "10.0.0.1", "10.0.0.2"), Protocol: pick(r, corev1.ProtocolTCP, corev1.ProtocolUDP)}}
	}
	return c
}

func genPod(r *rand.Rand) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{genContainer(r, "c")}}}
	if r.IntN(3) == 0 {
		p.Spec.Containers = append(p.Spec.Containers, genContainer(r, "d"))
	}
	if r.IntN(4) == 0 {
		init := genContainer(r, "init")
		if r.IntN(2) == 0 {
			always := corev1.ContainerRestartPolicyAlways
			init.RestartPolicy = &always
		}
		p.Spec.InitContainers = []corev1.Container{init}
	}
	if r.IntN(8) == 0 {
		p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: q("250m"), corev1.ResourceMemory: q("100Mi")}
	}
	if r.IntN(10) == 0 {
		p.Spec.NodeName = pick(r, "n1", "n2")
	}
	if r.IntN(3) == 0 {
		p.Spec.NodeSelector = map[string]string{"zone": pick(r, "a", "b")}
	}
	if r.IntN(3) == 0 {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: genSelector(r)}}
	}
	for range r.IntN(3) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, pick(r,
			corev1.Toleration{Key: "k1", Operator: corev1.TolerationOpEqual, Value: "v1"},
			corev1.Toleration{Key: "k1", Operator: corev1.TolerationOpEqual, Value: "v2", Effect: corev1.TaintEffectNoSchedule},
			corev1.Toleration{Key: "k2", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			corev1.Toleration{Key: "k2", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			corev1.Toleration{Operator: corev1.TolerationOpExists},
			corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists},
			corev1.Toleration{Key: "k4", Operator: corev1.TolerationOpEqual, Value: "5"}))
	}
	return p
}

// genSelector is a required node affinity over labels only (terms naming
// nodes by metadata.name narrow the nodes in PreFilter, a step of the
// whole cycle that Place covers).
func genSelector(r *rand.Rand) *corev1.NodeSelector {
	ns := &corev1.NodeSelector{}
	for range 1 + r.IntN(2) {
		var term corev1.NodeSelectorTerm
		for range r.IntN(3) {
			term.MatchExpressions = append(term.MatchExpressions, pick(r,
				corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, "a", "b")}},
				corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"a"}},
				corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpExists},
				corev1.NodeSelectorRequirement{Key: "cores", Operator: corev1.NodeSelectorOpDoesNotExist},
				corev1.NodeSelectorRequirement{Key: "cores", Operator: corev1.NodeSelectorOpGt, Values: []string{"8"}},
				corev1.NodeSelectorRequirement{Key: "cores", Operator: corev1.NodeSelectorOpLt, Values: []string{"8"}}))
		}
		if r.IntN(6) == 0 {
			term.MatchFields = []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"n1"}}}
		}
		ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, term)
	}
	return ns
}
