package daemonset

import (
	"context"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func (c *Controller) updateDaemonSet(old, cur *appsv1.DaemonSet) {
	if old.UID != cur.UID {
		c.deleteDaemonSet(old)
	}
	c.enqueue(cur)
}

func (c *Controller) deleteDaemonSet(ds *appsv1.DaemonSet) {
	k := key(ds.Namespace, ds.Name)
	c.expectations.Forget(k)
	c.queue.Add(k)
}

// resolveControllerRef is the DaemonSet ref names, if it is still the same
// object.
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *appsv1.DaemonSet {
	if ref.Kind != controllerKind.Kind {
		return nil
	}
	ds, ok := c.daemonSets.Get(namespace, ref.Name)
	if !ok || ds.UID != ref.UID {
		return nil
	}
	return ds
}

// daemonSetsSelecting are the DaemonSets of namespace whose selector
// matches the labels (an empty selector matches nothing).
func (c *Controller) daemonSetsSelecting(namespace string, set map[string]string) []*appsv1.DaemonSet {
	if len(set) == 0 {
		return nil
	}
	return c.daemonSets.List(namespace, func(ds *appsv1.DaemonSet) bool {
		sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
		return err == nil && !sel.Empty() && sel.Matches(labels.Set(set))
	})
}

// A revision's controller is queued when the revision is created, changes
// or goes; an orphan queues every DaemonSet that may adopt it.
func (c *Controller) addRevision(cr *appsv1.ControllerRevision) {
	if cr.DeletionTimestamp != nil {
		c.deleteRevision(cr)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(cr); ref != nil {
		return
	}
	for _, ds := range c.daemonSetsSelecting(cr.Namespace, cr.Labels) {
		c.enqueue(ds)
	}
}

func (c *Controller) updateRevision(old, cur *appsv1.ControllerRevision) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if ds := c.resolveControllerRef(old.Namespace, oldRef); ds != nil {
			c.enqueue(ds)
		}
	}
	if curRef != nil {
		if ds := c.resolveControllerRef(cur.Namespace, curRef); ds != nil {
			c.enqueue(ds)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(cur.Labels, old.Labels) {
		for _, ds := range c.daemonSetsSelecting(cur.Namespace, cur.Labels) {
			c.enqueue(ds)
		}
	}
}

func (c *Controller) deleteRevision(cr *appsv1.ControllerRevision) {
	if ref := metav1.GetControllerOfNoCopy(cr); ref != nil {
		if ds := c.resolveControllerRef(cr.Namespace, ref); ds != nil {
			c.enqueue(ds)
		}
	}
}

// addPod counts a new pod toward its DaemonSet's expected creates and
// queues the DaemonSet; an orphan queues every DaemonSet that may adopt
// it.
func (c *Controller) addPod(pod *corev1.Pod) {
	if pod.DeletionTimestamp != nil {
		c.deletePod(pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if ds := c.resolveControllerRef(pod.Namespace, ref); ds != nil {
			c.expectations.CreationObserved(key(ds.Namespace, ds.Name))
			c.enqueue(ds)
		}
		return
	}
	for _, ds := range c.daemonSetsSelecting(pod.Namespace, pod.Labels) {
		c.enqueue(ds)
	}
}

// updatePod queues the DaemonSets a pod change concerns: a pod being
// deleted counts as deleted at once; its old and new controller (the new
// one again after minReadySeconds when it just became ready); for an
// orphan whose labels or owner changed, every DaemonSet that may adopt it.
func (c *Controller) updatePod(old, cur *corev1.Pod) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	if cur.DeletionTimestamp != nil {
		c.deletePod(cur)
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if ds := c.resolveControllerRef(old.Namespace, oldRef); ds != nil {
			c.enqueue(ds)
		}
	}
	if curRef != nil {
		ds := c.resolveControllerRef(cur.Namespace, curRef)
		if ds == nil {
			return
		}
		c.enqueue(ds)
		if !isPodReady(old) && isPodReady(cur) && ds.Spec.MinReadySeconds > 0 {
			c.enqueueAfter(ds, time.Duration(ds.Spec.MinReadySeconds)*time.Second+time.Second)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(cur.Labels, old.Labels) {
		for _, ds := range c.daemonSetsSelecting(cur.Namespace, cur.Labels) {
			c.enqueue(ds)
		}
	}
}

// deletePod counts a pod gone (or going) toward its DaemonSet's expected
// deletes and queues the DaemonSet.
func (c *Controller) deletePod(pod *corev1.Pod) {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return
	}
	if ds := c.resolveControllerRef(pod.Namespace, ref); ds != nil {
		c.expectations.DeletionObserved(key(ds.Namespace, ds.Name))
		c.enqueue(ds)
	}
}

// A new node, or one whose labels or taints changed, is looked at by the
// node queue's workers (syncNodeUpdate).
func (c *Controller) addNode(node *corev1.Node) { c.nodeQueue.Add(node.Name) }

func (c *Controller) updateNode(old, cur *corev1.Node) {
	if equality.Semantic.DeepEqual(old.Labels, cur.Labels) && equality.Semantic.DeepEqual(old.Spec.Taints, cur.Spec.Taints) {
		return
	}
	c.nodeQueue.Add(cur.Name)
}

// deleteNode queues the DaemonSets with pods meant for a node gone, so
// that their status stops counting it. (Upstream's controller does not
// watch node deletions: its status catches up at the DaemonSet's next
// sync; the pods themselves are the pod garbage collector's.)
func (c *Controller) deleteNode(node *corev1.Node) {
	for _, ds := range c.daemonSets.ListAll(func(*appsv1.DaemonSet) bool { return true }) {
		pods := c.pods.List(ds.Namespace, func(p *corev1.Pod) bool {
			ref := metav1.GetControllerOfNoCopy(p)
			target, err := TargetNodeName(p)
			return err == nil && target == node.Name && ref != nil && ref.UID == ds.UID
		})
		if len(pods) > 0 {
			c.enqueue(ds)
		}
	}
}

// syncNodeUpdate queues each DaemonSet for which the node now needs a pod
// it lacks, has a pod it must lose, or whose misscheduled count may
// change.
func (c *Controller) syncNodeUpdate(_ context.Context, nodeName string) error {
	node, ok := c.nodes.Get("", nodeName)
	if !ok {
		return nil
	}
	for _, ds := range c.daemonSets.ListAll(func(*appsv1.DaemonSet) bool { return true }) {
		shouldRun, shouldContinueRunning := NodeShouldRunDaemonPod(node, ds)
		scheduled := len(c.podsOnNode(ds, nodeName)) > 0
		if (shouldRun && !scheduled) || (!shouldContinueRunning && scheduled) || (scheduled && ds.Status.NumberMisscheduled > 0) {
			c.enqueue(ds)
		}
	}
	return nil
}

// podsOnNode are the pods ds controls that are bound to the node.
func (c *Controller) podsOnNode(ds *appsv1.DaemonSet, nodeName string) []*corev1.Pod {
	return c.pods.List(ds.Namespace, func(p *corev1.Pod) bool {
		ref := metav1.GetControllerOfNoCopy(p)
		return p.Spec.NodeName == nodeName && ref != nil && ref.Kind == controllerKind.Kind && ref.Name == ds.Name
	})
}
