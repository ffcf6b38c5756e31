package nodesim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// The reasons kube-scheduler 1.37's filter plugins give for a node that
// does not fit a pod (pkg/scheduler/framework/plugins).
const (
	ReasonNodeName      = "node(s) didn't match the requested node name"
	ReasonUnschedulable = "node(s) were unschedulable"
	ReasonNodeAffinity  = "node(s) didn't match Pod's node affinity/selector"
	ReasonTaint         = "node(s) had untolerated taint(s)"
	ReasonNodePorts     = "node(s) didn't have free ports for the requested pod ports"
	ReasonTooManyPods   = "Too many pods"
)

// Verdict is one node's answer for a pod: the reasons it does not fit
// (none: it fits), and whether preemption could not help (upstream's
// UnschedulableAndUnresolvable code).
type Verdict struct {
	Reasons      []string
	Unresolvable bool
}

// Fits reports whether the node fits the pod.
func (v Verdict) Fits() bool { return len(v.Reasons) == 0 }

// NodeState is a node with what the pods bound to it already use: the
// scheduler cache's NodeInfo, reduced to what the filters read.
type NodeState struct {
	Node *corev1.Node
	// Pods are the non-terminal pods bound to the node.
	Pods []*corev1.Pod
	// Requested and NonZeroRequested, when not nil, are the sums of the
	// pods' Usage (the scheduler's cache keeps them); nil: summed here.
	Requested, NonZeroRequested corev1.ResourceList
}

// Usage is what a pod takes of a node as the scheduler counts it: its
// effective requests, and the same with the scoring defaults for
// containers that request no cpu or memory.
type Usage struct {
	Requests, NonZero corev1.ResourceList
}

// PodUsage is the pod's Usage.
func PodUsage(pod *corev1.Pod) Usage {
	return Usage{Requests: podRequests(pod),
		NonZero: resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{NonMissingContainerRequests: nonZeroRequests})}
}

// Add adds u to the node's sums.
func (n *NodeState) Add(u Usage) {
	if n.Requested == nil {
		n.Requested, n.NonZeroRequested = corev1.ResourceList{}, corev1.ResourceList{}
	}
	addResources(n.Requested, u.Requests)
	addResources(n.NonZeroRequested, u.NonZero)
}

// sums are the node's Requested and NonZeroRequested, summed from its pods
// when not given.
func (n *NodeState) sums() (requested, nonZero corev1.ResourceList) {
	if n.Requested != nil {
		return n.Requested, n.NonZeroRequested
	}
	m := &NodeState{}
	for _, p := range n.Pods {
		m.Add(PodUsage(p))
	}
	if m.Requested == nil {
		return corev1.ResourceList{}, corev1.ResourceList{}
	}
	return m.Requested, m.NonZeroRequested
}

// podFacts are what the filters and the score read of a pod, worked out
// once per scheduling cycle rather than once per node (as the scheduler's
// PreFilter and PreScore states).
type podFacts struct {
	pod *corev1.Pod
	// requests are the pod's effective requests; nonZero the same with the
	// scoring defaults for containers without cpu or memory requests.
	requests, nonZero corev1.ResourceList
	hostPorts         []corev1.ContainerPort
	affinity          nodeaffinity.RequiredNodeAffinity
}

func factsOf(pod *corev1.Pod) *podFacts {
	return &podFacts{pod: pod, requests: podRequests(pod),
		nonZero:   resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{NonMissingContainerRequests: nonZeroRequests}),
		hostPorts: hostPorts(pod), affinity: nodeaffinity.GetRequiredNodeAffinity(pod)}
}

// Filter runs kube-scheduler's NodeName, NodeUnschedulable,
// TaintToleration, NodeAffinity, NodePorts and NodeResourcesFit filters,
// in the default profile's order, stopping at the first that fails as the
// framework does.
func Filter(pod *corev1.Pod, n *NodeState) Verdict { return factsOf(pod).filter(n) }

func (f *podFacts) filter(n *NodeState) Verdict {
	pod, node := f.pod, n.Node
	switch {
	case pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name:
		return Verdict{Reasons: []string{ReasonNodeName}, Unresolvable: true}
	case node.Spec.Unschedulable && !tolerates(pod, &corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}):
		return Verdict{Reasons: []string{ReasonUnschedulable}, Unresolvable: true}
	case hasUntoleratedTaint(pod, node):
		return Verdict{Reasons: []string{ReasonTaint}, Unresolvable: true}
	case !f.matchesNodeAffinity(node):
		return Verdict{Reasons: []string{ReasonNodeAffinity}, Unresolvable: true}
	case !fitsPorts(f.hostPorts, n.Pods):
		return Verdict{Reasons: []string{ReasonNodePorts}}
	}
	return f.fitResources(n)
}

func tolerates(pod *corev1.Pod, taint *corev1.Taint) bool {
	return corev1helpers.TolerationsTolerateTaint(klog.Background(), pod.Spec.Tolerations, taint, false)
}

// matchesNodeAffinity is the NodeAffinity filter: the pod's nodeSelector
// and its required node affinity both match (a term that cannot be parsed
// matches nothing).
func (f *podFacts) matchesNodeAffinity(node *corev1.Node) bool {
	ok, _ := f.affinity.Match(node)
	return ok
}

// hasUntoleratedTaint is the TaintToleration filter: a NoSchedule or
// NoExecute taint the pod does not tolerate.
func hasUntoleratedTaint(pod *corev1.Pod, node *corev1.Node) bool {
	_, found := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations,
		func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}, false)
	return found
}

// podRequests are the pod's effective requests as the scheduler counts
// them (containers, init containers and sidecars, pod-level resources,
// overhead).
func podRequests(pod *corev1.Pod) corev1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// fitResources is the NodeResourcesFit filter: the pod count against the
// node's pods allocatable, then each requested resource against what the
// node's pods leave of its allocatable. A request larger than the whole
// allocatable is one preemption cannot help.
func (f *podFacts) fitResources(n *NodeState) Verdict {
	var v Verdict
	alloc := n.Node.Status.Allocatable
	if int64(len(n.Pods))+1 > alloc.Pods().Value() {
		v.Reasons = append(v.Reasons, ReasonTooManyPods)
	}
	want := f.requests
	used, _ := n.sums()
	for _, name := range orderedResources(want) {
		q := want[name]
		if name == corev1.ResourcePods || q.Sign() <= 0 {
			continue
		}
		if !schedulable(name) {
			continue
		}
		a, u := alloc[name], used[name]
		if amount(name, q) > amount(name, a)-amount(name, u) {
			v.Reasons = append(v.Reasons, "Insufficient "+string(name))
			if amount(name, q) > amount(name, a) {
				v.Unresolvable = true
			}
		}
	}
	return v
}

// schedulable reports whether the filter checks a resource: cpu, memory,
// ephemeral-storage and the scalar ones (extended resources, hugepages,
// attachable volumes); the rest of a request is not the scheduler's.
func schedulable(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return true
	}
	s := string(name)
	if strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) || strings.HasPrefix(s, corev1.ResourceAttachableVolumesPrefix) {
		return true
	}
	// An extended resource or a prefixed native one (kubernetes.io/...).
	return strings.Contains(s, "/") && !strings.HasPrefix(s, "requests.")
}

// orderedResources is the order the filter reports: cpu, memory,
// ephemeral-storage, then the scalar resources (upstream ranges over a
// map for these; sorted here).
func orderedResources(l corev1.ResourceList) []corev1.ResourceName {
	first := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}
	var out, rest []corev1.ResourceName
	for _, n := range first {
		if _, ok := l[n]; ok {
			out = append(out, n)
		}
	}
	for n := range l {
		if !slices.Contains(first, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// amount is a quantity as the scheduler compares it: milli-units for cpu,
// units for the rest.
func amount(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

func addResources(into, l corev1.ResourceList) {
	for n, q := range l {
		sum := into[n]
		sum.Add(q)
		into[n] = sum
	}
}

// fitsPorts is the NodePorts filter: no host port the pod wants is taken
// on the node for the same protocol and an overlapping host IP (empty and
// 0.0.0.0 overlap every IP).
func fitsPorts(want []corev1.ContainerPort, bound []*corev1.Pod) bool {
	if len(want) == 0 {
		return true
	}
	for _, p := range bound {
		for _, have := range hostPorts(p) {
			for _, w := range want {
				if portsConflict(w, have) {
					return false
				}
			}
		}
	}
	return true
}

// hostPorts are the host ports of the pod's containers and sidecars (init
// containers that run for the pod's whole life).
func hostPorts(pod *corev1.Pod) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	add := func(ports []corev1.ContainerPort) {
		for _, p := range ports {
			if p.HostPort > 0 {
				out = append(out, p)
			}
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c.Ports)
		}
	}
	for _, c := range pod.Spec.Containers {
		add(c.Ports)
	}
	return out
}

func portsConflict(a, b corev1.ContainerPort) bool {
	proto := func(p corev1.Protocol) corev1.Protocol {
		if p == "" {
			return corev1.ProtocolTCP
		}
		return p
	}
	ip := func(s string) string {
		if s == "" {
			return "0.0.0.0"
		}
		return s
	}
	if a.HostPort != b.HostPort || proto(a.Protocol) != proto(b.Protocol) {
		return false
	}
	return ip(a.HostIP) == "0.0.0.0" || ip(b.HostIP) == "0.0.0.0" || ip(a.HostIP) == ip(b.HostIP)
}

// FitError is kube-scheduler's message for a pod no node fits, with the
// default preemption plugin's part (admitd does not preempt; with every
// pod's default priority there is nothing to preempt, so the message is
// the one upstream gives when no victims are found).
func FitError(pod *corev1.Pod, verdicts []Verdict) string {
	if len(verdicts) == 0 {
		return "no nodes available to schedule pods"
	}
	msg := fmt.Sprintf("0/%d nodes are available: %s.", len(verdicts), histogram(verdicts, func(v Verdict) []string { return v.Reasons }))
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == corev1.PreemptNever {
		return msg + " preemption: not eligible due to preemptionPolicy=Never."
	}
	preemption := histogram(verdicts, func(v Verdict) []string {
		if v.Unresolvable {
			return []string{"Preemption is not helpful for scheduling"}
		}
		return []string{"No preemption victims found for incoming pod"}
	})
	return msg + fmt.Sprintf(" preemption: 0/%d nodes are available: %s.", len(verdicts), preemption)
}

// histogram counts reasons across nodes and prints them as the scheduler
// does: "<count> <reason>", sorted as strings, comma-separated.
func histogram(verdicts []Verdict, reasons func(Verdict) []string) string {
	counts := map[string]int{}
	for _, v := range verdicts {
		for _, r := range reasons(v) {
			counts[r]++
		}
	}
	var out []string
	for r, n := range counts {
		out = append(out, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// The requests the scheduler's scoring assumes for a container that sets
// none (pkg/scheduler/util's DefaultMilliCPURequest and
// DefaultMemoryRequest).
var nonZeroRequests = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("100m"),
	corev1.ResourceMemory: resource.MustParse("200Mi"),
}

// LeastAllocatedScore is NodeResourcesFit's default score (0-100): the
// share of the node's cpu and memory left free once the pod is placed,
// averaged with equal weights, counting containers without requests at
// the scheduler's defaults.
func LeastAllocatedScore(pod *corev1.Pod, n *NodeState) int64 { return factsOf(pod).score(n) }

func (f *podFacts) score(n *NodeState) int64 {
	_, used := n.sums()
	var sum int64
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		requested := f.nonZero[name].DeepCopy()
		requested.Add(used[name])
		alloc, req := amount(name, n.Node.Status.Allocatable[name]), amount(name, requested)
		if alloc == 0 || req > alloc {
			continue
		}
		sum += (alloc - req) * 100 / alloc
	}
	return sum / 2
}

// Place is one scheduling cycle over the nodes: the index of the node
// that fits the pod with the best least-allocated score (one of equals at
// random), or -1 and kube-scheduler's message for why none does. As
// NodeAffinity's PreFilter, required node affinity naming nodes by
// metadata.name narrows the nodes first: the others are not filtered and
// count as not satisfying the plugin.
func Place(pod *corev1.Pod, states []*NodeState) (int, string) { return place(pod, states, rand.IntN) }

// place is Place with the random choice among equals made by intn.
func place(pod *corev1.Pod, states []*NodeState, intn func(int) int) (int, string) {
	names, narrowed := affinityNodeNames(pod)
	if narrowed && len(names) == 0 {
		n := len(states)
		return -1, fmt.Sprintf("0/%d nodes are available: %s. preemption: 0/%d nodes are available: %d Preemption is not helpful for scheduling.",
			n, reasonAffinityConflict, n, n)
	}
	facts := factsOf(pod)
	verdicts := make([]Verdict, len(states))
	best, bestScore, ties := -1, int64(-1), 0
	for i, n := range states {
		if narrowed && !names[n.Node.Name] {
			verdicts[i] = Verdict{Reasons: []string{reasonNotInPreFilter}, Unresolvable: true}
			continue
		}
		verdicts[i] = facts.filter(n)
		if !verdicts[i].Fits() {
			continue
		}
		// The best score wins, one of equals at random (upstream's
		// selectHost samples them so).
		switch score := facts.score(n); {
		case score > bestScore:
			best, bestScore, ties = i, score, 1
		case score == bestScore:
			ties++
			if intn(ties) == 0 {
				best = i
			}
		}
	}
	if best >= 0 {
		return best, ""
	}
	return -1, FitError(pod, verdicts)
}

const (
	reasonAffinityConflict = "pod affinity terms conflict"
	reasonNotInPreFilter   = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
)

// affinityNodeNames are the nodes the pod's required node affinity names
// through metadata.name In requirements (intersected within a term,
// united across terms); narrowed is false when some term names none,
// which leaves every node possible.
func affinityNodeNames(pod *corev1.Pod) (names map[string]bool, narrowed bool) {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil, false
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return nil, false
	}
	names = map[string]bool{}
	for _, t := range terms {
		var term map[string]bool
		for _, r := range t.MatchFields {
			if r.Key != "metadata.name" || r.Operator != corev1.NodeSelectorOpIn {
				continue
			}
			values := map[string]bool{}
			for _, v := range r.Values {
				if term == nil || term[v] {
					values[v] = true
				}
			}
			term = values
		}
		if term == nil {
			return nil, false
		}
		for n := range term {
			names[n] = true
		}
	}
	return names, true
}
