package nodelifecycle

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// markPodsNotReady sets the Ready condition of the pods bound to nodeName
// to False (a pod without one is left alone), writing each pod's status
// and recording a NodeNotReady event on it, as upstream's
// MarkPodsNotReady; a pod gone meanwhile is skipped.
func (c *Controller) markPodsNotReady(ctx context.Context, pods []*corev1.Pod, nodeName string) error {
	var errs []error
	for _, cached := range pods {
		if cached.Spec.NodeName != nodeName {
			continue
		}
		pod, changed := withReadyFalse(cached, metav1.NewTime(c.clock.Now()))
		if !changed {
			continue
		}
		if _, err := c.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			errs = append(errs, err)
		}
		c.recorder.Event(pod, corev1.EventTypeWarning, "NodeNotReady", "Node is not ready")
	}
	return errors.Join(errs...)
}

// withReadyFalse returns a copy of pod with its Ready condition False
// (transitioning at now), and whether that changed anything.
func withReadyFalse(pod *corev1.Pod, now metav1.Time) (*corev1.Pod, bool) {
	for i, cond := range pod.Status.Conditions {
		if cond.Type != corev1.PodReady {
			continue
		}
		if cond.Status == corev1.ConditionFalse {
			return pod, false
		}
		out := pod.DeepCopy()
		out.Status.Conditions[i].Status = corev1.ConditionFalse
		out.Status.Conditions[i].LastTransitionTime = now
		return out, true
	}
	return pod, false
}

// syncBoundPod marks a pod just bound to a node not ready when the node
// is not Ready; false asks for another try later.
func (c *Controller) syncBoundPod(ctx context.Context, key podKey) bool {
	pod, ok := c.pods.Get(key.namespace, key.name)
	if !ok {
		return true
	}
	c.mu.Lock()
	h := c.health[pod.Spec.NodeName]
	var ready *corev1.NodeCondition
	if h != nil {
		ready = condition(h.status, corev1.NodeReady).DeepCopy()
	}
	c.mu.Unlock()
	if h == nil {
		return true // not seen yet, or gone: the monitor pass sees to it
	}
	if _, ok := c.nodes.Get("", pod.Spec.NodeName); !ok {
		return false
	}
	if ready == nil || ready.Status == corev1.ConditionTrue {
		return true
	}
	if err := c.markPodsNotReady(ctx, []*corev1.Pod{pod}, pod.Spec.NodeName); err != nil {
		c.log.Warn("marking a pod not ready", "pod", key.namespace+"/"+key.name, "node", pod.Spec.NodeName, "err", err)
		return false
	}
	return true
}

// nodeEvent records an event on node as upstream's RecordNodeEvent:
// "Node <name> event: <message>".
func (c *Controller) nodeEvent(node *corev1.Node, eventType, reason, message string) {
	c.recorder.Eventf(nodeRef(node), eventType, reason, "Node %s event: %s", node.Name, message)
}

// nodeStatusEvent records a node's new status as upstream's
// RecordNodeStatusChange: "Node <name> status is now: <status>".
func (c *Controller) nodeStatusEvent(node *corev1.Node, status string) {
	c.recorder.Eventf(nodeRef(node), corev1.EventTypeNormal, status, "Node %s status is now: %s", node.Name, status)
}

func nodeRef(node *corev1.Node) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: types.UID(node.UID)}
}
