package nodelifecycle

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/controllers"
)

// nodeHealthUpdateRetries and retrySleep are upstream's
// NodeHealthUpdateRetry and retrySleepTime.
const (
	nodeHealthUpdateRetries = 5
	retrySleep              = 20 * time.Millisecond
)

// monitorNodeHealth is one pass over the nodes: new and removed nodes are
// recorded, each node's health is updated (conditions Unknown once it has
// been silent too long), its NoExecute taint queued or lifted, its pods
// marked not ready when it stops being Ready, and the zones' states
// follow.
func (c *Controller) monitorNodeHealth(ctx context.Context) {
	start := c.clock.Now()
	defer func() { c.metrics.allNodesTook(c.clock.Since(start)) }()
	nodes := c.nodes.ListAll(func(*corev1.Node) bool { return true })
	slices.SortFunc(nodes, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	added, removed, newZones := c.classify(nodes)
	for _, node := range newZones {
		c.addZone(node)
	}
	for _, node := range added {
		c.nodeEvent(node, corev1.EventTypeNormal, "RegisteredNode", fmt.Sprintf("Registered Node %s in Controller", node.Name))
		c.mu.Lock()
		c.known[node.Name] = node
		c.mu.Unlock()
		c.addZone(node)
		if _, err := c.markReachable(ctx, node); err != nil {
			c.log.Warn("removing the NoExecute taints of a new node", "node", node.Name, "err", err)
		}
	}
	for _, node := range removed {
		c.nodeEvent(node, corev1.EventTypeNormal, "RemovingNode", fmt.Sprintf("Removing Node %s from Controller", node.Name))
		c.mu.Lock()
		delete(c.known, node.Name)
		delete(c.retry, node.Name)
		c.mu.Unlock()
	}
	readyByZone := map[string][]*corev1.NodeCondition{}
	for _, node := range nodes {
		c.updateNode(ctx, node, readyByZone)
	}
	c.handleDisruption(ctx, readyByZone, nodes)
}

// classify returns the nodes not known yet, the known ones gone, and
// known ones whose zone has no state (a zone forgotten while empty).
func (c *Controller) classify(nodes []*corev1.Node) (added, removed, newZones []*corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	present := make(map[string]bool, len(nodes))
	for _, node := range nodes {
		present[node.Name] = true
		if _, ok := c.known[node.Name]; !ok {
			added = append(added, node)
		} else if _, ok := c.zoneStates[zoneOf(node)]; !ok {
			newZones = append(newZones, node)
		}
	}
	for name, node := range c.known {
		if !present[name] {
			removed = append(removed, node)
		}
	}
	slices.SortFunc(removed, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	return added, removed, newZones
}

// updateNode updates one node's health, retrying from a fresh read when
// the status write fails, and acts on its Ready condition.
func (c *Controller) updateNode(ctx context.Context, cached *corev1.Node, readyByZone map[string][]*corev1.NodeCondition) {
	start := c.clock.Now()
	defer func() { c.metrics.nodeHealthTook(c.clock.Since(start)) }()
	node := cached.DeepCopy()
	var observed corev1.NodeCondition
	var current *corev1.NodeCondition
	var err error
	for try := 0; ; try++ {
		if observed, current, err = c.tryUpdateNodeHealth(ctx, node); err == nil {
			break
		}
		if errors.Is(err, errCacheBehind) || try+1 == nodeHealthUpdateRetries {
			c.log.Warn("updating the node's health; its pods are left as they are", "node", cached.Name, "err", err)
			return
		}
		time.Sleep(retrySleep)
		if node, err = c.client.CoreV1().Nodes().Get(ctx, cached.Name, metav1.GetOptions{}); err != nil {
			c.log.Warn("reading a node to update its health again", "node", cached.Name, "err", err)
			return
		}
	}
	if !excludedFromDisruption(node) {
		key := zoneOf(node)
		readyByZone[key] = append(readyByZone[key], current)
	}
	if current == nil {
		c.forgetRetry(node.Name)
		return
	}
	c.queueTaintEviction(ctx, node, current)
	c.mu.Lock()
	retry := c.retry[node.Name]
	c.mu.Unlock()
	becameNotReady := current.Status != corev1.ConditionTrue && observed.Status == corev1.ConditionTrue
	if becameNotReady {
		c.nodeStatusEvent(node, "NodeNotReady")
	}
	if becameNotReady || (retry && observed.Status != corev1.ConditionTrue) {
		if err := c.markPodsNotReady(ctx, controllers.PodsOnNode(c.pods, node.Name), node.Name); err != nil {
			c.log.Warn("marking the pods of a node not ready; tried again next pass", "node", node.Name, "err", err)
			c.mu.Lock()
			c.retry[node.Name] = true
			c.mu.Unlock()
			return
		}
	}
	c.forgetRetry(node.Name)
}

func (c *Controller) forgetRetry(name string) {
	c.mu.Lock()
	delete(c.retry, name)
	c.mu.Unlock()
}

// queueTaintEviction acts on a node's Ready condition: False or Unknown
// swaps the other NoExecute taint for its own at once when the node has
// the other, else queues the node for its taint; True lifts both.
func (c *Controller) queueTaintEviction(ctx context.Context, node *corev1.Node, ready *corev1.NodeCondition) {
	if ready.Status == corev1.ConditionTrue {
		if _, err := c.markReachable(ctx, node); err != nil {
			c.log.Warn("removing the NoExecute taints of a Ready node", "node", node.Name, "err", err)
		}
		return
	}
	own, other, ok := noExecuteTaints(ready.Status)
	if !ok {
		return
	}
	if hasTaint(node.Spec.Taints, other) {
		if err := c.swapTaints(ctx, node, []corev1.Taint{own}, []corev1.Taint{other}); err != nil {
			c.log.Warn("swapping the NoExecute taints of a node", "node", node.Name, "err", err)
		}
		return
	}
	if q := c.zoneTainter(node); q != nil {
		if !hasTaint(node.Spec.Taints, own) {
			q.remove(node.Name) // a node tainted before, untainted since, is queued again
		}
		if q.add(node.Name, string(node.UID)) {
			c.wakeTaintPasses()
		}
	}
}

// markReachable removes both NoExecute taints of node and takes it out
// of its zone's queue; true when it was known there.
func (c *Controller) markReachable(ctx context.Context, node *corev1.Node) (bool, error) {
	if err := c.removeTaints(ctx, node, unreachableNoExecute); err != nil {
		return false, err
	}
	if err := c.removeTaints(ctx, node, notReadyNoExecute); err != nil {
		return false, err
	}
	if q := c.zoneTainter(node); q != nil {
		return q.remove(node.Name), nil
	}
	return false, nil
}

// noExecuteTaintPass taints the queued nodes each zone's rate allows,
// with the NoExecute taint of their Ready condition as it is then.
func (c *Controller) noExecuteTaintPass(ctx context.Context) {
	c.mu.Lock()
	queues := maps.Clone(c.tainters)
	c.mu.Unlock()
	for key, q := range queues {
		q.try(func(n timedNode) (bool, time.Duration) {
			node, ok := c.nodes.Get("", n.name)
			if !ok {
				return true, 0
			}
			ready := condition(&node.Status, corev1.NodeReady)
			if ready == nil {
				return false, 50 * time.Millisecond
			}
			own, other, ok := noExecuteTaints(ready.Status)
			if !ok {
				return true, 0 // Ready again
			}
			if err := c.swapTaints(ctx, node, []corev1.Taint{own}, []corev1.Taint{other}); err != nil {
				c.log.Warn("tainting a node NoExecute", "node", node.Name, "err", err)
				return false, 0
			}
			c.metrics.evicted(key, 1)
			return true, 0
		})
	}
}

// noExecuteTaints are the NoExecute taint a node whose Ready condition
// has status is to have, and the one it is not to have; false for a
// status that calls for neither.
func noExecuteTaints(status corev1.ConditionStatus) (own, other corev1.Taint, ok bool) {
	switch status {
	case corev1.ConditionFalse:
		return notReadyNoExecute, unreachableNoExecute, true
	case corev1.ConditionUnknown:
		return unreachableNoExecute, notReadyNoExecute, true
	}
	return corev1.Taint{}, corev1.Taint{}, false
}
