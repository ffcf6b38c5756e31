package statefulset

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
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
	candidates := c.pods.List(set.Namespace, func(p *corev1.Pod) bool {
		ref := metav1.GetControllerOfNoCopy(p)
		return ref == nil || ref.UID == set.UID
	})
	var claimed []*corev1.Pod
	var errs []error
	var canAdopt *error
	for _, pod := range candidates {
		ref := metav1.GetControllerOfNoCopy(pod)
		matches := selector.Matches(labels.Set(pod.Labels)) && isMemberOf(set, pod)
		switch {
		case ref != nil && matches:
			claimed = append(claimed, pod)
		case ref != nil:
			if set.DeletionTimestamp == nil {
				if err := c.releasePod(ctx, set, pod); err != nil {
					errs = append(errs, err)
				}
			}
		case set.DeletionTimestamp != nil || !matches || pod.DeletionTimestamp != nil:
		default:
			if canAdopt == nil {
				err := c.recheckNotDeleted(ctx, set)
				canAdopt = &err
			}
			if *canAdopt != nil {
				errs = append(errs, fmt.Errorf("can't adopt Pod %v/%v (%v): %v", pod.Namespace, pod.Name, pod.UID, *canAdopt))
				continue
			}
			if err := c.patchPodOwner(ctx, pod, []any{metav1.NewControllerRef(set, controllerKind)}); err != nil {
				if !apierrors.IsNotFound(err) {
					errs = append(errs, err)
				}
				continue
			}
			claimed = append(claimed, pod)
		}
	}
	return claimed, utilerrors.NewAggregate(errs)
}

// recheckNotDeleted reads the set from the server: adopting is refused
// when it is gone, replaced or being deleted.
func (c *Controller) recheckNotDeleted(ctx context.Context, set *appsv1.StatefulSet) error {
	fresh, err := c.client.AppsV1().StatefulSets(set.Namespace).Get(ctx, set.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("can't recheck DeletionTimestamp: %v", err)
	}
	if fresh.UID != set.UID {
		return fmt.Errorf("can't recheck DeletionTimestamp: original StatefulSet %v/%v is gone: got uid %v, wanted %v", set.Namespace, set.Name, fresh.UID, set.UID)
	}
	if fresh.DeletionTimestamp != nil {
		return fmt.Errorf("%v/%v has just been deleted at %v", fresh.Namespace, fresh.Name, fresh.DeletionTimestamp)
	}
	return nil
}

// releasePod removes the set's reference from the pod; a pod gone or
// replaced is let go.
func (c *Controller) releasePod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	err := c.patchPodOwner(ctx, pod, []any{map[string]string{"$patch": "delete", "uid": string(set.UID)}})
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil
	}
	return err
}

// patchPodOwner patches the pod's ownerReferences (a strategic merge
// patch conditional on its uid).
func (c *Controller) patchPodOwner(ctx context.Context, pod *corev1.Pod, refs []any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": refs, "uid": pod.UID}})
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}
