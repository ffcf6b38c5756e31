package tainteviction

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
)

// podUpdate is a pod that changed, with the node it was bound to then.
type podUpdate struct {
	namespace, name, node string
}

func (u podUpdate) key() string { return u.namespace + "/" + u.name }

// podChanged queues a pod added (old nil), removed (cur nil), or whose
// tolerations or node changed.
func (c *Controller) podChanged(old, cur *corev1.Pod) {
	if old != nil && cur != nil && old.Spec.NodeName == cur.Spec.NodeName &&
		equality.Semantic.DeepEqual(old.Spec.Tolerations, cur.Spec.Tolerations) {
		return
	}
	p := cur
	if p == nil {
		p = old
	}
	c.podUpdates.Add(podUpdate{namespace: p.Namespace, name: p.Name, node: p.Spec.NodeName})
}

// nodeChanged queues a node added (old nil), removed (cur nil), or whose
// NoExecute taints changed.
func (c *Controller) nodeChanged(old, cur *corev1.Node) {
	if old != nil && cur != nil && equality.Semantic.DeepEqual(noExecuteTaints(old.Spec.Taints), noExecuteTaints(cur.Spec.Taints)) {
		return
	}
	n := cur
	if n == nil {
		n = old
	}
	c.nodeUpdates.Add(n.Name)
}

// pass takes the next item off queue and hands it to the update worker
// over ch (the worker marks it done); false once the queue is shut down
// or ctx ends.
func pass[T comparable](ctx context.Context, queue workqueue.TypedInterface[T], ch chan<- T) bool {
	item, quit := queue.Get()
	if quit {
		return false
	}
	select {
	case ch <- item:
		return true
	case <-ctx.Done():
		queue.Done(item)
		return false
	}
}

// handleUpdates handles one pod change, or the node changes waiting,
// taking every node change waiting before a pod change; false once ctx
// ends.
func (c *Controller) handleUpdates(ctx context.Context, nodeCh <-chan string, podCh <-chan podUpdate) bool {
	select {
	case <-ctx.Done():
		return false
	case node := <-nodeCh:
		c.handleNode(node)
	case pod := <-podCh:
		for more := true; more; {
			select {
			case node := <-nodeCh:
				c.handleNode(node)
			default:
				more = false
			}
		}
		c.handlePod(pod)
	}
	return true
}

func (c *Controller) handleNode(name string) {
	defer c.nodeUpdates.Done(name)
	c.nodeUpdated(name)
}

func (c *Controller) handlePod(u podUpdate) {
	defer c.podUpdates.Done(u)
	c.podUpdated(u)
}

// nodeUpdated records the node's NoExecute taints (forgetting those of a
// node gone), then judges every pod bound to it against them: with none
// left, every scheduled deletion of its pods is cancelled.
func (c *Controller) nodeUpdated(name string) {
	node, ok := c.nodes.Get("", name)
	if !ok {
		c.log.Debug("node deleted", "node", name)
		delete(c.taintedNodes, name)
		return
	}
	taints := noExecuteTaints(node.Spec.Taints)
	if len(taints) == 0 {
		delete(c.taintedNodes, name)
	} else {
		c.taintedNodes[name] = taints
	}
	// pods read after the taints are recorded: a pod change later than
	// this listing is judged against them when it is handled
	pods := controllers.PodsOnNode(c.pods, name)
	if len(taints) == 0 {
		for _, p := range pods {
			c.cancelDeletion(p.Namespace, p.Name)
		}
		return
	}
	now := c.clock.Now()
	for _, p := range pods {
		c.judge(p.Namespace, p.Name, p.Spec.Tolerations, taints, now)
	}
}

// podUpdated judges a changed pod against its node's NoExecute taints,
// or cancels its deletion when it is gone. A pod whose node has none is
// left alone: the node's change cancelled what was scheduled.
func (c *Controller) podUpdated(u podUpdate) {
	pod, ok := c.pods.Get(u.namespace, u.name)
	if !ok {
		c.log.Debug("pod deleted", "pod", u.key())
		c.cancelDeletion(u.namespace, u.name)
		return
	}
	if pod.Spec.NodeName != u.node || pod.Spec.NodeName == "" {
		return // a later update, queued under its new node, handles it
	}
	taints, ok := c.taintedNodes[pod.Spec.NodeName]
	if !ok {
		return
	}
	c.judge(pod.Namespace, pod.Name, pod.Spec.Tolerations, taints, c.clock.Now())
}

// judge schedules, keeps or cancels the deletion of the pod namespace/name
// with tolerations on a node with the NoExecute taints (some) at now.
func (c *Controller) judge(namespace, name string, tolerations []corev1.Toleration, taints []corev1.Taint, now time.Time) {
	key := namespace + "/" + name
	matched, ok := matchTolerations(taints, tolerations, c.compareOp)
	if !ok {
		c.log.Debug("pod does not tolerate its node's NoExecute taints", "pod", key)
		if c.deletions.immediatePending(key) {
			// judged again (its node's update and its own) before the
			// deletion ran: upstream would queue a second one, and delete
			// twice; one is enough
			return
		}
		c.cancelDeletion(namespace, name) // replaced by one at once
		c.deletions.add(key, now, now)
		return
	}
	wait := tolerationTime(matched)
	if wait < 0 { // forever, or tolerationSeconds past a Duration's range
		// (negative once multiplied, as upstream's, which tolerates it too)
		c.cancelDeletion(namespace, name)
		return
	}
	createdAt := now
	if since, ok := c.deletions.createdAt(key); ok {
		// The deletion scheduled earlier stands, even if the wait is now
		// shorter or longer. Upstream replaces it (cancelling, with its
		// event, and scheduling it at now plus the new wait) only when it
		// was scheduled at this very time: that never happens on a real
		// clock, and on a fake one would only add a cancelling event, so
		// such a deletion stands too.
		if !since.After(now) {
			return
		}
		createdAt = since
		c.cancelDeletion(namespace, name)
	}
	c.deletions.add(key, createdAt, now.Add(wait))
}

// cancelDeletion cancels the pod's scheduled deletion, with an event when
// one was waiting.
func (c *Controller) cancelDeletion(namespace, name string) {
	if c.deletions.cancel(namespace + "/" + name) {
		c.event(namespace, name, "Cancelling deletion of Pod %s/%s")
	}
}
