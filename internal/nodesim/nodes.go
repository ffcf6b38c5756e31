package nodesim

import (
	"context"
	"encoding/json"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/internal/controllers/watchcache"
)

// The kubelet's node lease: in kube-node-lease, named after the node,
// lasting 40s (nodeLeaseDurationSeconds).
const (
	leaseNamespace       = corev1.NamespaceNodeLease
	leaseDurationSeconds = 40
)

// unschedulableFlush is how often pods no node fit are tried again
// whatever happened (kube-scheduler's podMaxInUnschedulablePodsDuration).
const unschedulableFlush = 5 * time.Minute

// register creates the Node of a simulated node as its kubelet does, as
// the node itself (NodeRestriction lets a node create only itself); one
// that exists already is kept.
func (s *Simulator) register(ctx context.Context, name string) error {
	c, err := s.client(User(name), "kubelet/"+kubeletVersion)
	if err != nil {
		return err
	}
	_, err = c.CoreV1().Nodes().Create(ctx, registration(name, s.indexes[name]), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// nodeHandlers follow the nodes of the shared cache.
func (s *Simulator) nodeHandlers() watchcache.Handlers[*corev1.Node] {
	written := func(node *corev1.Node) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, changed := s.nodeWritten(node); changed {
			s.requeueUnschedulableLocked()
		}
	}
	return watchcache.Handlers[*corev1.Node]{Add: written, Update: func(_, cur *corev1.Node) { written(cur) },
		Remove: func(node *corev1.Node) {
			s.mu.Lock()
			delete(s.nodes, node.Name)
			s.nodeOrder = nil
			s.mu.Unlock()
		}}
}

// nodeWritten records a stored node (s.mu held) and queues its sync if it
// is simulated, returning its name then, and whether what the filters read
// of it changed (as kube-scheduler's queueing hints, a heartbeat does not
// send pending pods back to the scheduler).
func (s *Simulator) nodeWritten(node *corev1.Node) (string, bool) {
	if !Simulated(node) {
		delete(s.nodes, node.Name)
		s.nodeOrder = nil
		return "", false
	}
	sn := s.nodes[node.Name]
	changed := sn == nil || schedulingChanged(sn.node, node)
	if sn == nil {
		c, err := s.client(User(node.Name), "kubelet/"+kubeletVersion)
		if err != nil {
			s.log.Error("a simulated node's client", "node", node.Name, "err", err)
			return "", false
		}
		sn = &simNode{index: s.indexFor(node.Name), client: c}
		s.nodes[node.Name] = sn
		s.nodeOrder = nil
		// Pods bound before the node was seen get their kubelet now.
		for key, p := range s.pods {
			if p.Spec.NodeName == node.Name {
				s.podQueue.Add(key)
			}
		}
	}
	sn.node = node
	s.nodeQueue.Add(node.Name)
	return node.Name, changed
}

// schedulingChanged reports whether a node changed in what the filters
// read: labels, taints, unschedulable, allocatable.
func schedulingChanged(old, node *corev1.Node) bool {
	return !equality.Semantic.DeepEqual(old.Labels, node.Labels) || !equality.Semantic.DeepEqual(old.Spec.Taints, node.Spec.Taints) ||
		old.Spec.Unschedulable != node.Spec.Unschedulable || !equality.Semantic.DeepEqual(old.Status.Allocatable, node.Status.Allocatable)
}

// indexFor is the index of a node's addresses: the flag's nodes have
// theirs, any other takes the lowest free one (s.mu held).
func (s *Simulator) indexFor(name string) int {
	if i, ok := s.indexes[name]; ok {
		return i
	}
	used := map[int]bool{}
	for _, i := range s.indexes {
		used[i] = true
	}
	i := 0
	for used[i] {
		i++
	}
	s.indexes[name] = i
	return i
}

// syncNode posts the node's status when it is not ready or its last
// report is older than the report interval, takes the lease, and removes
// the not-ready taint once the node is ready.
func (s *Simulator) syncNode(ctx context.Context, name string) error {
	s.mu.Lock()
	sn := s.nodes[name]
	var node *corev1.Node
	var due bool
	if sn != nil {
		node = sn.node.DeepCopy()
		due = time.Since(sn.lastReported) >= s.cfg.StatusReportInterval
	}
	s.mu.Unlock()
	if node == nil {
		return nil
	}
	if !sn.hasLease() {
		if err := s.renewLease(ctx, sn, node); err != nil {
			return err
		}
	}
	if !nodeReady(node) || due {
		if err := s.postStatus(ctx, sn, node); err != nil {
			return err
		}
		return nil // the taint is looked at when the status comes back
	}
	return s.removeNotReadyTaint(ctx, node)
}

// postStatus patches the node's status as its kubelet.
func (s *Simulator) postStatus(ctx context.Context, sn *simNode, node *corev1.Node) error {
	now := metav1.Now()
	patch, err := json.Marshal(map[string]any{"status": nodeStatus(node, sn.index, now)})
	if err != nil {
		return err
	}
	if _, err := sn.client.CoreV1().Nodes().Patch(ctx, node.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return err
	}
	s.mu.Lock()
	sn.lastReported = now.Time
	s.mu.Unlock()
	return nil
}

// removeNotReadyTaint is the node lifecycle controller's part for a ready
// node: its node.kubernetes.io/not-ready NoSchedule taint (which
// TaintNodesByCondition gives every new Node) goes, written as the
// node-controller, conditional on the version read.
func (s *Simulator) removeNotReadyTaint(ctx context.Context, node *corev1.Node) error {
	var kept []corev1.Taint
	found := false
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady && t.Effect == corev1.TaintEffectNoSchedule {
			found = true
			continue
		}
		kept = append(kept, t)
	}
	if !found {
		return nil
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": node.ResourceVersion},
		"spec":     map[string]any{"taints": kept},
	})
	if err != nil {
		return err
	}
	_, err = s.controller.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil // the next event brings the node again
	}
	return err
}

// heartbeats renews every simulated node's lease each renew interval, and
// queues the nodes whose status is due.
func (s *Simulator) heartbeats(ctx context.Context) {
	t := time.NewTicker(s.cfg.LeaseRenewInterval)
	defer t.Stop()
	lastFlush := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		type beat struct {
			sn   *simNode
			node *corev1.Node
		}
		var beats []beat
		for name, sn := range s.nodes {
			beats = append(beats, beat{sn, sn.node})
			if time.Since(sn.lastReported) >= s.cfg.StatusReportInterval {
				s.nodeQueue.Add(name)
			}
		}
		if time.Since(lastFlush) >= unschedulableFlush {
			// As kube-scheduler's podMaxInUnschedulablePodsDuration.
			s.requeueUnschedulableLocked()
			lastFlush = time.Now()
		}
		s.mu.Unlock()
		for _, b := range beats {
			if err := s.renewLease(ctx, b.sn, b.node); err != nil && ctx.Err() == nil {
				s.log.Debug("renewing a simulated node's lease", "node", b.node.Name, "err", err)
			}
		}
	}
}

// renewLease renews the node's Lease as its kubelet: an update of the
// lease last written, read again (or created, owned by the Node) when that
// fails.
func (s *Simulator) renewLease(ctx context.Context, sn *simNode, node *corev1.Node) error {
	sn.leaseMu.Lock()
	defer sn.leaseMu.Unlock()
	leases := sn.client.CoordinationV1().Leases(leaseNamespace)
	now := metav1.NewMicroTime(time.Now())
	if sn.lease != nil {
		sn.lease.Spec.RenewTime = &now
		lease, err := leases.Update(ctx, sn.lease, metav1.UpdateOptions{})
		if err == nil {
			sn.lease = lease
			return nil
		}
		sn.lease = nil
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return err
		}
	}
	lease, err := leases.Get(ctx, node.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: node.Name, Namespace: leaseNamespace, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptrTo(node.Name), LeaseDurationSeconds: ptrTo(int32(leaseDurationSeconds)), RenewTime: &now},
		}
		lease, err = leases.Create(ctx, lease, metav1.CreateOptions{})
	} else if err == nil {
		lease.Spec.RenewTime = &now
		lease.Spec.HolderIdentity = ptrTo(node.Name)
		lease.Spec.LeaseDurationSeconds = ptrTo(int32(leaseDurationSeconds))
		lease, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	}
	if err != nil {
		return err
	}
	sn.lease = lease
	return nil
}

// hasLease reports whether the node's lease has been written.
func (sn *simNode) hasLease() bool {
	sn.leaseMu.Lock()
	defer sn.leaseMu.Unlock()
	return sn.lease != nil
}
