package replicaset

import (
	"reflect"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// cutKey splits a queue key "<namespace>/<name>".
func cutKey(k string) (namespace, name string, ok bool) {
	return strings.Cut(k, "/")
}

func sortByName(pods []*corev1.Pod) {
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
}

// resolveControllerRef is the controller ref names, if it is of this
// controller's kind and still the same object (uid).
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *appsv1.ReplicaSet {
	if ref.Kind != c.kind.gvk.Kind {
		return nil
	}
	rs, ok := c.owners.Get(namespace, ref.Name)
	if !ok || rs.UID != ref.UID {
		return nil
	}
	return rs
}

// ownersMatching are the controllers whose selector matches the pod's
// labels (an empty selector matches nothing).
func (c *Controller) ownersMatching(pod *corev1.Pod) []*appsv1.ReplicaSet {
	if len(pod.Labels) == 0 {
		return nil
	}
	return c.owners.List(pod.Namespace, func(rs *appsv1.ReplicaSet) bool {
		sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		return err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels))
	})
}

// addPod counts a new pod toward its controller's expected creates and
// queues the controller; an orphan queues every controller that may
// adopt it.
func (c *Controller) addPod(pod *corev1.Pod) {
	if pod.DeletionTimestamp != nil {
		c.deletePodEvent(pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if rs := c.resolveControllerRef(pod.Namespace, ref); rs != nil {
			k := key(rs.Namespace, rs.Name)
			c.expectations.CreationObserved(k)
			c.queue.Add(k)
		}
		return
	}
	for _, rs := range c.ownersMatching(pod) {
		c.enqueue(rs)
	}
}

// updatePod queues the controllers a pod change concerns: a pod being
// deleted counts as deleted at once; the old controller of a pod whose
// controller changed; its controller (again after minReadySeconds when it
// just became ready); for an orphan whose labels or owner changed, every
// controller that may adopt it.
func (c *Controller) updatePod(old, cur *corev1.Pod) {
	labelsChanged := !reflect.DeepEqual(old.Labels, cur.Labels)
	if cur.DeletionTimestamp != nil {
		c.deletePodEvent(cur)
		if labelsChanged {
			c.deletePodEvent(old)
		}
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if rs := c.resolveControllerRef(old.Namespace, oldRef); rs != nil {
			c.enqueue(rs)
		}
	}
	if curRef != nil {
		rs := c.resolveControllerRef(cur.Namespace, curRef)
		if rs == nil {
			return
		}
		c.enqueue(rs)
		if !isPodReady(old) && isPodReady(cur) && rs.Spec.MinReadySeconds > 0 {
			c.queue.AddAfter(key(rs.Namespace, rs.Name), time.Duration(rs.Spec.MinReadySeconds)*time.Second)
		}
		return
	}
	if labelsChanged || refChanged {
		for _, rs := range c.ownersMatching(cur) {
			c.enqueue(rs)
		}
	}
}

// deletePodEvent counts a pod gone (or going) toward its controller's
// expected deletes and queues the controller.
func (c *Controller) deletePodEvent(pod *corev1.Pod) {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return
	}
	rs := c.resolveControllerRef(pod.Namespace, ref)
	if rs == nil {
		return
	}
	k := key(rs.Namespace, rs.Name)
	c.expectations.DeletionOfObserved(k, key(pod.Namespace, pod.Name))
	c.queue.Add(k)
}
