package nodelifecycle

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeHealth is what the controller last saw of a node's health signals,
// with its own clock's times: when a signal last changed (probe) and when
// the Ready condition last changed.
type nodeHealth struct {
	probe           time.Time
	readyTransition time.Time
	status          *corev1.NodeStatus
	lease           *coordinationv1.Lease
}

// unknownConditions are the conditions a silent node's status gets as
// Unknown; NetworkUnavailable is the control plane's and stays.
var unknownConditions = []corev1.NodeConditionType{
	corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure,
}

// errCacheBehind says the cached Lease of a node is older than the stored
// one: the node is looked at again in the next pass.
var errCacheBehind = errors.New("the lease cache is behind the server")

func condition(status *corev1.NodeStatus, t corev1.NodeConditionType) *corev1.NodeCondition {
	if status == nil {
		return nil
	}
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}

// observe brings the saved health h (nil for a node not seen yet) up to
// date with node and its lease at now. It returns the new health, the
// grace period the node has, and the Ready condition as observed (a fake
// Unknown one, dated at the node's creation, when it never posted one).
func observe(h *nodeHealth, node *corev1.Node, lease *coordinationv1.Lease, now time.Time, startupGrace, grace time.Duration) (*nodeHealth, time.Duration, corev1.NodeCondition) {
	current := condition(&node.Status, corev1.NodeReady)
	var observed corev1.NodeCondition
	period := grace
	if current == nil {
		created := node.CreationTimestamp
		observed = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
			LastHeartbeatTime: created, LastTransitionTime: created}
		period = startupGrace
		if h != nil {
			h.status = &node.Status
		} else {
			h = &nodeHealth{status: &node.Status, probe: created.Time, readyTransition: created.Time}
		}
	} else {
		observed = *current
	}
	var saved *corev1.NodeCondition
	var savedLease *coordinationv1.Lease
	if h != nil {
		saved, savedLease = condition(h.status, corev1.NodeReady), h.lease
	}
	switch {
	case h == nil, saved == nil && current != nil, saved != nil && current == nil:
		h = &nodeHealth{status: &node.Status, probe: now, readyTransition: now}
	case saved != nil && current != nil && !saved.LastHeartbeatTime.Equal(&current.LastHeartbeatTime):
		transition := h.readyTransition
		if !saved.LastTransitionTime.Equal(&current.LastTransitionTime) {
			transition = now
		}
		h = &nodeHealth{status: &node.Status, probe: now, readyTransition: transition}
	}
	// A renewed lease is a heartbeat, even from a node that never posted
	// its status.
	if lease != nil && (savedLease == nil || renewedSince(savedLease, lease)) {
		h.lease = lease
		h.probe = now
	}
	return h, period, observed
}

// renewedSince says whether lease was renewed after saved was; never when
// either has no renew time.
func renewedSince(saved, lease *coordinationv1.Lease) bool {
	return saved.Spec.RenewTime != nil && lease.Spec.RenewTime != nil && saved.Spec.RenewTime.Before(lease.Spec.RenewTime)
}

// markUnknown sets the conditions of a silent node to Unknown in its
// status, as upstream: a condition never posted is added with reason
// NodeStatusNeverUpdated, one not Unknown yet becomes Unknown with reason
// NodeStatusUnknown; both transition at now.
func markUnknown(node *corev1.Node, now metav1.Time) {
	for _, t := range unknownConditions {
		cur := condition(&node.Status, t)
		switch {
		case cur == nil:
			node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: t, Status: corev1.ConditionUnknown,
				Reason: "NodeStatusNeverUpdated", Message: "Kubelet never posted node status.",
				LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: now})
		case cur.Status != corev1.ConditionUnknown:
			cur.Status = corev1.ConditionUnknown
			cur.Reason = "NodeStatusUnknown"
			cur.Message = "Kubelet stopped posting node status."
			cur.LastTransitionTime = now
		}
	}
}

// tryUpdateNodeHealth updates the saved health of node (which it may
// change: pass a copy) and, when the node has been silent for its grace
// period, writes its conditions as Unknown. It returns the Ready
// condition as observed before and as it is now (nil when none).
func (c *Controller) tryUpdateNodeHealth(ctx context.Context, node *corev1.Node) (corev1.NodeCondition, *corev1.NodeCondition, error) {
	if err := c.leaseCacheCurrent(); err != nil {
		return corev1.NodeCondition{}, nil, err
	}
	lease, _ := c.leases.Get(corev1.NamespaceNodeLease, node.Name)
	now := c.clock.Now()
	c.mu.Lock()
	// the saved health keeps a copy: node is changed below, and the pod
	// worker reads the saved status
	h, grace, observed := observe(c.health[node.Name], node.DeepCopy(), lease, now, c.cfg.StartupGracePeriod, c.cfg.MonitorGracePeriod)
	c.health[node.Name] = h
	c.mu.Unlock()
	current := condition(&node.Status, corev1.NodeReady)
	if !now.After(h.probe.Add(grace)) {
		return observed, current, nil
	}
	if err := c.checkLeaseCurrent(ctx, node.Name, h.lease); err != nil {
		return observed, current, err
	}
	markUnknown(node, metav1.NewTime(now))
	current = condition(&node.Status, corev1.NodeReady)
	if equality.Semantic.DeepEqual(current, &observed) {
		return observed, current, nil
	}
	if _, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		return observed, current, err
	}
	c.mu.Lock()
	c.health[node.Name] = &nodeHealth{status: &node.Status, probe: h.probe, readyTransition: c.clock.Now(), lease: lease}
	c.mu.Unlock()
	return observed, current, nil
}

// leaseCacheCurrent is errCacheBehind while the lease cache has not
// caught up with a lease read from the server.
func (c *Controller) leaseCacheCurrent() error {
	need := c.leaseRevisionNeeded.Load()
	if need == 0 {
		return nil
	}
	if have := c.leases.Revision(); have < need {
		return fmt.Errorf("%w: at revision %d, a lease was read at %d", errCacheBehind, have, need)
	}
	c.leaseRevisionNeeded.CompareAndSwap(need, 0)
	return nil
}

// checkLeaseCurrent reads the node's Lease from the server: one other
// than the cached lease means the cache lags (errCacheBehind), and no
// node is looked at until it has caught up.
func (c *Controller) checkLeaseCurrent(ctx context.Context, node string, cached *coordinationv1.Lease) error {
	live, err := c.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: reading the lease of node %s: %v", errCacheBehind, node, err)
	}
	var cachedRV string
	if cached != nil {
		cachedRV = cached.ResourceVersion
	}
	if live.ResourceVersion != cachedRV {
		if rv, err := strconv.ParseInt(live.ResourceVersion, 10, 64); err == nil {
			c.leaseRevisionNeeded.Store(rv)
		}
		return fmt.Errorf("%w: lease of node %s at %s, cached at %q", errCacheBehind, node, live.ResourceVersion, cachedRV)
	}
	return nil
}
