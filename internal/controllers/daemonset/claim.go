package daemonset

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// claimer adopts and releases one kind of object (pods, revisions) for a
// DaemonSet, as upstream's ControllerRefManager.
type claimer struct {
	c        *Controller
	ds       *appsv1.DaemonSet
	selector labels.Selector
	kind     string // "Pod", "ControllerRevision": in the adoption error
	patch    func(ctx context.Context, name string, body []byte) error
	canAdopt *error // the recheck's answer, once asked
}

// claim returns the objects ds owns, after adopting the orphans its
// selector matches and releasing the ones it owns that it no longer
// matches. Adopting first rechecks, once, that ds is not being deleted,
// by a read from the server.
func claim[T metav1.Object](ctx context.Context, m *claimer, objs []T) ([]T, error) {
	var claimed []T
	var errs []error
	for _, obj := range objs {
		ref := metav1.GetControllerOfNoCopy(obj)
		matches := m.selector.Matches(labels.Set(obj.GetLabels()))
		switch {
		case ref != nil && ref.UID != m.ds.UID:
		case ref != nil && matches:
			claimed = append(claimed, obj)
		case ref != nil:
			if m.ds.DeletionTimestamp == nil {
				if err := m.release(ctx, obj); err != nil {
					errs = append(errs, err)
				}
			}
		case m.ds.DeletionTimestamp != nil || !matches || obj.GetDeletionTimestamp() != nil || obj.GetNamespace() != m.ds.Namespace:
		default:
			if err := m.adopt(ctx, obj); err != nil {
				if !apierrors.IsNotFound(err) {
					errs = append(errs, err)
				}
				continue
			}
			claimed = append(claimed, obj)
		}
	}
	return claimed, utilerrors.NewAggregate(errs)
}

func (m *claimer) adopt(ctx context.Context, obj metav1.Object) error {
	if m.canAdopt == nil {
		err := m.c.recheckNotDeleted(ctx, m.ds)
		m.canAdopt = &err
	}
	if *m.canAdopt != nil {
		return fmt.Errorf("can't adopt %s %v/%v (%v): %v", m.kind, obj.GetNamespace(), obj.GetName(), obj.GetUID(), *m.canAdopt)
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": []metav1.OwnerReference{*metav1.NewControllerRef(m.ds, controllerKind)}, "uid": obj.GetUID()}})
	if err != nil {
		return err
	}
	return m.patch(ctx, obj.GetName(), body)
}

// release removes ds's ownerReference; an object gone or whose patch is
// invalid (its uid changed) is let go.
func (m *claimer) release(ctx context.Context, obj metav1.Object) error {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": []map[string]string{{"$patch": "delete", "uid": string(m.ds.UID)}}, "uid": obj.GetUID()}})
	if err != nil {
		return err
	}
	err = m.patch(ctx, obj.GetName(), body)
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil
	}
	return err
}

// recheckNotDeleted reads ds from the server: adopting is refused when it
// is gone, replaced or being deleted.
func (c *Controller) recheckNotDeleted(ctx context.Context, ds *appsv1.DaemonSet) error {
	fresh, err := c.client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("can't recheck DeletionTimestamp: %v", err)
	}
	if fresh.UID != ds.UID {
		return fmt.Errorf("can't recheck DeletionTimestamp: original DaemonSet %v/%v is gone: got uid %v, wanted %v", ds.Namespace, ds.Name, fresh.UID, ds.UID)
	}
	if fresh.DeletionTimestamp != nil {
		return fmt.Errorf("%v/%v has just been deleted at %v", fresh.Namespace, fresh.Name, fresh.DeletionTimestamp)
	}
	return nil
}

// daemonPods are the pods ds owns, after adoption and release.
func (c *Controller) daemonPods(ctx context.Context, ds *appsv1.DaemonSet) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, err
	}
	pods := c.pods.List(ds.Namespace, func(p *corev1.Pod) bool {
		ref := metav1.GetControllerOfNoCopy(p)
		return ref == nil || ref.UID == ds.UID
	})
	m := &claimer{c: c, ds: ds, selector: sel, kind: "Pod", patch: func(ctx context.Context, name string, body []byte) error {
		_, err := c.client.CoreV1().Pods(ds.Namespace).Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{})
		return err
	}}
	return claim(ctx, m, pods)
}

// ownedRevisions are the ControllerRevisions ds owns, after adoption and
// release.
func (c *Controller) ownedRevisions(ctx context.Context, ds *appsv1.DaemonSet) ([]*appsv1.ControllerRevision, error) {
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, err
	}
	revs := c.revisions.List(ds.Namespace, func(*appsv1.ControllerRevision) bool { return true })
	m := &claimer{c: c, ds: ds, selector: sel, kind: "ControllerRevision", patch: func(ctx context.Context, name string, body []byte) error {
		_, err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{})
		return err
	}}
	return claim(ctx, m, revs)
}

// nodesToDaemonPods are ds's pods by the node each is for; finished pods
// being deleted are left out unless includeDeletedTerminal.
func (c *Controller) nodesToDaemonPods(ctx context.Context, ds *appsv1.DaemonSet, includeDeletedTerminal bool) (map[string][]*corev1.Pod, error) {
	pods, err := c.daemonPods(ctx, ds)
	if err != nil {
		return nil, err
	}
	byNode := map[string][]*corev1.Pod{}
	for _, p := range pods {
		if !includeDeletedTerminal && isPodTerminal(p) && p.DeletionTimestamp != nil {
			continue
		}
		node, err := TargetNodeName(p)
		if err != nil {
			c.log.Debug("a daemon pod names no node", "pod", p.Namespace+"/"+p.Name, "err", err)
			continue
		}
		byNode[node] = append(byNode[node], p)
	}
	return byNode, nil
}
