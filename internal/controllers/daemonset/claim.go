package daemonset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/admitd/admitd/internal/controllers"
)

// refManager adopts and releases objects of kind for ds.
func refManager[T metav1.Object](c *Controller, ds *appsv1.DaemonSet, selector labels.Selector, kind string, patch func(context.Context, T, []byte) error) *controllers.ControllerRefManager[T] {
	return &controllers.ControllerRefManager[T]{Owner: ds, OwnerKind: controllerKind, Kind: kind, Selector: selector,
		Get: func(ctx context.Context) (metav1.Object, error) {
			return c.client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
		},
		Patch: patch}
}

// daemonPods are the pods ds owns, after adoption and release.
func (c *Controller) daemonPods(ctx context.Context, ds *appsv1.DaemonSet) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, err
	}
	pods := controllers.PodsOfController(c.pods, ds, "DaemonSet", true)
	return refManager(c, ds, sel, "Pod", controllers.PatchPods(c.client)).Claim(ctx, pods)
}

// ownedRevisions are the ControllerRevisions ds owns, after adoption and
// release.
func (c *Controller) ownedRevisions(ctx context.Context, ds *appsv1.DaemonSet) ([]*appsv1.ControllerRevision, error) {
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, err
	}
	revs := c.revisions.List(ds.Namespace, func(*appsv1.ControllerRevision) bool { return true })
	return refManager(c, ds, sel, "ControllerRevision", controllers.PatchControllerRevisions(c.client)).Claim(ctx, revs)
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
