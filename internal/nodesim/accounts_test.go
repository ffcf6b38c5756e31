package nodesim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// referenceStates is the scheduler's snapshot as it was taken before the
// nodes' accounts were kept: every pod known looked at for every
// placement, its Usage worked out anew and summed on the node it is bound
// or assumed to, unless terminal.
func referenceStates(s *Simulator) []*NodeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	byNode := map[string]*NodeState{}
	var states []*NodeState
	for name, sn := range s.nodes {
		st := &NodeState{Node: sn.node, Requested: corev1.ResourceList{}, NonZeroRequested: corev1.ResourceList{}}
		byNode[name] = st
		states = append(states, st)
	}
	for k, p := range s.pods {
		node := p.Spec.NodeName
		if node == "" {
			node = s.assumed[k]
		}
		if st := byNode[node]; st != nil && !terminal(p) {
			st.Pods = append(st.Pods, p)
			st.Add(PodUsage(p))
		}
	}
	sort.Slice(states, func(i, j int) bool { return states[i].Node.Name < states[j].Node.Name })
	return states
}

// sameStates reports how two snapshots differ: nodes, pods (by
// namespace/name and version) and the amounts of every resource summed.
func sameStates(want, got []*NodeState) error {
	if len(want) != len(got) {
		return fmt.Errorf("%d nodes, want %d", len(got), len(want))
	}
	podNames := func(pods []*corev1.Pod) string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Namespace+"/"+p.Name+"@"+p.ResourceVersion)
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Node != g.Node {
			return fmt.Errorf("node %d is %s, want %s", i, g.Node.Name, w.Node.Name)
		}
		if a, b := podNames(w.Pods), podNames(g.Pods); a != b {
			return fmt.Errorf("node %s counts pods [%s], want [%s]", w.Node.Name, b, a)
		}
		for _, l := range [][2]corev1.ResourceList{{w.Requested, g.Requested}, {w.NonZeroRequested, g.NonZeroRequested}} {
			for name := range mergedKeys(l[0], l[1]) {
				a, b := l[0][name], l[1][name]
				if amount(name, a) != amount(name, b) || a.Cmp(b) != 0 {
					return fmt.Errorf("node %s has %s %s summed, want %s", w.Node.Name, name, b.String(), a.String())
				}
			}
		}
	}
	return nil
}

func mergedKeys(a, b corev1.ResourceList) map[corev1.ResourceName]bool {
	out := map[corev1.ResourceName]bool{}
	for n := range a {
		out[n] = true
	}
	for n := range b {
		out[n] = true
	}
	return out
}

// smallNode is a node that a few pods fill: 4 cpus, 8Gi, 6 pods; node-0
// is tainted.
func smallNode(i int) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: NodeName(i)},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
			corev1.ResourcePods: resource.MustParse("6"), "example.com/gpu": resource.MustParse("2"),
		}}}
	if i == 0 {
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
	}
	return n
}

// randomPod is a pending pod of varied requests (none, cpu, memory, an
// extended resource, an init container), sometimes a host port and a
// toleration of node-0's taint.
func randomPod(r *rand.Rand, i int) *corev1.Pod {
	pick := func(options ...string) string { return options[r.IntN(len(options))] }
	req := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{
		corev1.ResourceCPU:    pick("", "100m", "500m", "1", "1500m", "0.25"),
		corev1.ResourceMemory: pick("", "512Mi", "1Gi", "1500M", "3Gi"),
		"example.com/gpu":     pick("", "", "", "1"),
	} {
		if q != "" {
			req[name] = resource.MustParse(q)
		}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", i%40), UID: types.UID(fmt.Sprintf("uid-%d", i)), ResourceVersion: "1"},
		Spec: corev1.PodSpec{SchedulerName: DefaultSchedulerName, Containers: []corev1.Container{{Name: "c", Image: "i",
			Resources: corev1.ResourceRequirements{Requests: req}}}},
	}
	if r.IntN(5) == 0 {
		pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
	}
	if r.IntN(3) == 0 {
		pod.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
	}
	if r.IntN(6) == 0 {
		pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "i", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(pick("2", "200m"))}}}}
	}
	return pod
}

// The nodes' accounts decide every placement as summing every pod anew
// did: a random sequence of pods created, placed (assumed, then bound, in
// either order as the watch and the bind's answer race), running,
// resized, being deleted, Succeeded, Failed, deleted, recreated under the
// same name and relisted, with the snapshot compared with the reference
// after every step and each pod placed on both with the same random tie
// breaks.
func TestAccountsPlaceAsFullRecount(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			s := newTestSimulator(t, 0)
			for i := range 5 {
				s.nodes[NodeName(i)] = &simNode{node: smallNode(i), index: i}
			}
			var placed, unschedulable int
			for step := range 500 {
				pod := randomPod(r, step)
				key := pod.Namespace + "/" + pod.Name
				s.mu.Lock()
				prev := s.pods[key]
				s.mu.Unlock()
				if prev == nil || r.IntN(8) == 0 { // a new pod, sometimes replacing one of the same name
					storePod(s, pod)
				} else {
					change(t, s, r, prev)
				}
				check(t, s, step, "after a change")
				switch placeBoth(t, s, r, key, step) {
				case 1:
					placed++
				case -1:
					unschedulable++
				}
				check(t, s, step, "after placing")
			}
			t.Logf("placed %d pods, %d not", placed, unschedulable)
			if placed < 50 || unschedulable < 20 {
				t.Errorf("placed %d pods and %d not, want both to happen often", placed, unschedulable)
			}
		})
	}
}

// placeBoth places the pending pod at key on the reference snapshot and on
// the accounts' with the same random source, requires the same node or
// the same message, and assumes the pod there (before or after storage
// shows it bound). It returns 1 when the pod was placed, -1 when not, 0
// when the scheduler would not place it (not pending).
func placeBoth(t *testing.T, s *Simulator, r *rand.Rand, key string, step int) int {
	t.Helper()
	want := referenceStates(s)
	pod, got := s.snapshot(key)
	if pod == nil {
		return 0
	}
	seed := r.Uint64()
	wantBest, wantMsg := place(pod, want, rand.New(rand.NewPCG(seed, 2)).IntN)
	gotBest, gotMsg := place(pod, got, rand.New(rand.NewPCG(seed, 2)).IntN)
	if gotBest != wantBest || gotMsg != wantMsg {
		t.Fatalf("step %d: %s placed on %d (%q), want %d (%q)", step, key, gotBest, gotMsg, wantBest, wantMsg)
	}
	if gotBest < 0 {
		return -1
	}
	node := got[gotBest].Node.Name
	bound := pod.DeepCopy()
	bound.Spec.NodeName = node
	if r.IntN(3) == 0 { // the watch brings the bound pod before the bind returns
		storePod(s, bound)
		s.assume(key, pod.UID, node)
	} else {
		s.assume(key, pod.UID, node)
		check(t, s, step, "after assuming")
		if r.IntN(10) > 0 {
			storePod(s, bound)
		}
	}
	return 1
}

// change moves the pod on a step of its life, or deletes it, or relists.
func change(t *testing.T, s *Simulator, r *rand.Rand, pod *corev1.Pod) {
	t.Helper()
	key := pod.Namespace + "/" + pod.Name
	next := pod.DeepCopy()
	switch r.IntN(8) {
	case 0:
		next.Status.Phase = corev1.PodRunning
	case 1:
		next.Status.Phase = corev1.PodSucceeded
	case 2:
		next.Status.Phase = corev1.PodFailed
	case 3:
		next.DeletionTimestamp = &metav1.Time{}
	case 4: // resized
		next.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("700m")}
	case 5, 6:
		s.podDeleted(key)
		return
	case 7:
		s.mu.Lock()
		var pods []*corev1.Pod
		for _, p := range s.pods {
			if r.IntN(10) > 0 {
				pods = append(pods, p)
			}
		}
		s.mu.Unlock()
		s.podsListed(pods)
		return
	}
	storePod(s, next)
}

func check(t *testing.T, s *Simulator, step int, when string) {
	t.Helper()
	s.mu.Lock()
	var got []*NodeState
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range s.nodes {
			if !yield(n) {
				return
			}
		}
	}) {
		acc := s.accounts.of(name)
		got = append(got, &NodeState{Node: s.nodes[name].node, Pods: acc.pods, Requested: acc.requested, NonZeroRequested: acc.nonZero})
	}
	s.mu.Unlock()
	if err := sameStates(referenceStates(s), got); err != nil {
		t.Fatalf("step %d, %s: %v", step, when, err)
	}
}

// A pod gets the lowest IP of its node's pod CIDR that no pod on that
// node has, from .2 on; a deleted pod's IP is free again.
func TestPodIPsPerNode(t *testing.T) {
	s := newTestSimulator(t, 2)
	bound := func(i int, node string) *corev1.Pod {
		p := deploymentPod(i)
		p.Spec.NodeName = node
		return storePod(s, p)
	}
	ipOf := func(p *corev1.Pod) string {
		sn := s.nodes[p.Spec.NodeName]
		return s.podIP(p.Namespace+"/"+p.Name, p, sn.node, sn.index)
	}
	a, b, c := bound(0, "node-0"), bound(1, "node-0"), bound(2, "node-1")
	got := []string{ipOf(a), ipOf(b), ipOf(c), ipOf(a)}
	if want := []string{"10.244.0.2", "10.244.0.3", "10.244.1.2", "10.244.0.2"}; !slices.Equal(got, want) {
		t.Errorf("IPs = %v, want %v", got, want)
	}
	s.podDeleted("default/" + a.Name)
	if got, want := ipOf(bound(3, "node-0")), "10.244.0.2"; got != want {
		t.Errorf("IP after a deletion = %s, want %s", got, want)
	}
	// An IP the kubelet's status shows counts as taken.
	d := deploymentPod(4)
	d.Spec.NodeName, d.Status.PodIP = "node-1", "10.244.1.3"
	storePod(s, d)
	if got, want := ipOf(bound(5, "node-1")), "10.244.1.4"; got != want {
		t.Errorf("IP next to one a status shows = %s, want %s", got, want)
	}
}
