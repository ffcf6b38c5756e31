package nodesim

import (
	corev1 "k8s.io/api/core/v1"
)

// nodeAccount is what the pods counted on one node take of it, as
// kube-scheduler's cache keeps a NodeInfo per node: the pods and the sums
// of their Usage. An account is never changed once made (a change makes a
// new one), so a snapshot shares it outside s.mu.
type nodeAccount struct {
	pods               []*corev1.Pod
	requested, nonZero corev1.ResourceList
}

// emptyAccount is the account of a node no pod is counted on.
var emptyAccount = &nodeAccount{requested: corev1.ResourceList{}, nonZero: corev1.ResourceList{}}

// countedPod is where and as what a pod is counted: its node, the version
// of the pod and that version's Usage.
type countedPod struct {
	node  string
	pod   *corev1.Pod
	usage Usage
}

// recount brings the accounts up to date with the pod at key (s.mu held).
// A pod counts on the node it is bound to, or that this scheduler bound it
// to before storage shows it (assumed), until it is deleted or its phase
// is Succeeded or Failed, as the snapshot of every pod used to count it.
func (s *Simulator) recount(key string) {
	p := s.pods[key]
	node := ""
	if p != nil && !terminal(p) {
		if node = p.Spec.NodeName; node == "" {
			node = s.assumed[key]
		}
	}
	old, had := s.counted[key]
	if !had && node == "" || had && old.node == node && old.pod == p {
		return
	}
	if had {
		s.accounts.change(old.node, &old, nil)
		delete(s.counted, key)
	}
	if node == "" {
		return
	}
	now := countedPod{node: node, pod: p}
	if had && old.pod.UID == p.UID && old.pod.ResourceVersion == p.ResourceVersion {
		now.usage = old.usage
	} else {
		now.usage = PodUsage(p)
	}
	s.accounts.change(node, nil, &now)
	s.counted[key] = now
}

// accounts are the nodes' accounts by node name, for every node a pod is
// counted on, simulated or not.
type accounts map[string]*nodeAccount

// of is the node's account.
func (a accounts) of(node string) *nodeAccount {
	if acc := a[node]; acc != nil {
		return acc
	}
	return emptyAccount
}

// change replaces the node's account by one without out and with in
// (either may be nil).
func (a accounts) change(node string, out, in *countedPod) {
	prev := a.of(node)
	next := &nodeAccount{pods: make([]*corev1.Pod, 0, len(prev.pods)+1),
		requested: prev.requested.DeepCopy(), nonZero: prev.nonZero.DeepCopy()}
	for _, p := range prev.pods {
		if out == nil || p != out.pod {
			next.pods = append(next.pods, p)
		}
	}
	if out != nil {
		subtractResources(next.requested, out.usage.Requests)
		subtractResources(next.nonZero, out.usage.NonZero)
	}
	if in != nil {
		next.pods = append(next.pods, in.pod)
		addResources(next.requested, in.usage.Requests)
		addResources(next.nonZero, in.usage.NonZero)
	}
	if len(next.pods) == 0 {
		delete(a, node)
		return
	}
	a[node] = next
}

// subtractResources takes l from into, dropping what comes to zero.
func subtractResources(into, l corev1.ResourceList) {
	for n, q := range l {
		left := into[n]
		left.Sub(q)
		if left.IsZero() {
			delete(into, n)
			continue
		}
		into[n] = left
	}
}
