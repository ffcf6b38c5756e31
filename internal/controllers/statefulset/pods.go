package statefulset

import (
	"context"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/admitd/admitd/internal/controllers"
)

// resolveControllerRef is the set the reference names, if it still exists
// with that uid.
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *appsv1.StatefulSet {
	if ref.Kind != controllerKind.Kind {
		return nil
	}
	set, ok := c.sets.Get(namespace, ref.Name)
	if !ok || set.UID != ref.UID {
		return nil
	}
	return set
}

// setsSelecting are the sets whose selector matches the pod's labels.
func (c *Controller) setsSelecting(pod *corev1.Pod) []*appsv1.StatefulSet {
	if len(pod.Labels) == 0 {
		return nil
	}
	return c.sets.List(pod.Namespace, func(set *appsv1.StatefulSet) bool {
		sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
		return err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels))
	})
}

// addPodEvent queues the pod's set, or for an orphan every set that may adopt
// it.
func (c *Controller) addPodEvent(pod *corev1.Pod) {
	if pod.DeletionTimestamp != nil {
		c.deletePodEvent(pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if set := c.resolveControllerRef(pod.Namespace, ref); set != nil {
			c.enqueue(set)
		}
		return
	}
	for _, set := range c.setsSelecting(pod) {
		c.enqueue(set)
	}
}

// updatePodEvent queues the sets a pod change concerns: its old and new
// controller (the new again after minReadySeconds when it just became
// ready), or for an orphan whose labels or owner changed, every set that
// may adopt it.
func (c *Controller) updatePodEvent(old, cur *corev1.Pod) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if set := c.resolveControllerRef(old.Namespace, oldRef); set != nil {
			c.enqueue(set)
		}
	}
	if curRef != nil {
		set := c.resolveControllerRef(cur.Namespace, curRef)
		if set == nil {
			return
		}
		c.enqueue(set)
		if !isPodReady(old) && isPodReady(cur) && set.Spec.MinReadySeconds > 0 {
			c.queue.AddAfter(key(set.Namespace, set.Name), time.Duration(set.Spec.MinReadySeconds)*time.Second)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(old.Labels, cur.Labels) {
		for _, set := range c.setsSelecting(cur) {
			c.enqueue(set)
		}
	}
}

// deletePodEvent queues the set of a pod gone.
func (c *Controller) deletePodEvent(pod *corev1.Pod) {
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if set := c.resolveControllerRef(pod.Namespace, ref); set != nil {
			c.enqueue(set)
		}
	}
}

// claimPods returns the set's pods after adopting the orphans that are
// its members (by name) and that its selector matches, and releasing the
// pods it controls that no longer are (upstream's
// PodControllerRefManager with isMemberOf as filter).
func (c *Controller) claimPods(ctx context.Context, set *appsv1.StatefulSet, selector labels.Selector) ([]*corev1.Pod, error) {
	candidates := controllers.PodsOfController(c.pods, set, "StatefulSet", true)
	m := refManager(c, set, selector, "Pod", controllers.PatchPods(c.client))
	m.Match = func(p *corev1.Pod) bool { return isMemberOf(set, p) }
	return m.Claim(ctx, candidates)
}

// refManager adopts and releases objects of kind for the set.
func refManager[T metav1.Object](c *Controller, set *appsv1.StatefulSet, selector labels.Selector, kind string, patch func(context.Context, T, []byte) error) *controllers.ControllerRefManager[T] {
	return &controllers.ControllerRefManager[T]{Owner: set, OwnerKind: controllerKind, Kind: kind, Selector: selector,
		Get: func(ctx context.Context) (metav1.Object, error) {
			return c.client.AppsV1().StatefulSets(set.Namespace).Get(ctx, set.Name, metav1.GetOptions{})
		},
		Patch: patch}
}
