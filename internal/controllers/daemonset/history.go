package daemonset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/deployment"
)

// Patch is what a ControllerRevision of ds stores: a strategic merge
// patch replacing spec.template with ds's (upstream's getPatch: the
// DaemonSet's JSON, its template with "$patch": "replace", keys sorted).
func Patch(ds *appsv1.DaemonSet) ([]byte, error) {
	b, err := json.Marshal(ds)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	template := raw["spec"].(map[string]any)["template"].(map[string]any)
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// matches: the revision stores ds's current template.
func matches(ds *appsv1.DaemonSet, cr *appsv1.ControllerRevision) (bool, error) {
	p, err := Patch(ds)
	if err != nil {
		return false, err
	}
	return bytes.Equal(p, cr.Data.Raw), nil
}

// Hash is the controller-revision-hash of ds's current template:
// upstream's controller.ComputeHash of the template and collision count.
func Hash(ds *appsv1.DaemonSet) string {
	return deployment.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
}

// constructHistory returns the revision of ds's current template (created,
// renumbered or deduplicated as needed) and its other revisions; a
// revision without the hash label gets its name as one.
func (c *Controller) constructHistory(ctx context.Context, ds *appsv1.DaemonSet) (cur *appsv1.ControllerRevision, old []*appsv1.ControllerRevision, err error) {
	revs, err := c.ownedRevisions(ctx, ds)
	if err != nil {
		return nil, nil, err
	}
	var current []*appsv1.ControllerRevision
	for _, cr := range revs {
		if _, ok := cr.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]; !ok {
			u := cr.DeepCopy()
			if u.Labels == nil {
				u.Labels = map[string]string{}
			}
			u.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] = u.Name
			if cr, err = c.client.AppsV1().ControllerRevisions(ds.Namespace).Update(ctx, u, metav1.UpdateOptions{}); err != nil {
				return nil, nil, err
			}
		}
		ok, err := matches(ds, cr)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			current = append(current, cr)
		} else {
			old = append(old, cr)
		}
	}
	next := maxRevision(old) + 1
	if len(current) == 0 {
		cur, err = c.snapshot(ctx, ds, next)
		return cur, old, err
	}
	if cur, err = c.dedupCurrent(ctx, ds, current); err != nil {
		return nil, nil, err
	}
	if cur.Revision < next {
		u := cur.DeepCopy()
		u.Revision = next
		if _, err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			return nil, nil, err
		}
	}
	return cur, old, nil
}

func maxRevision(revs []*appsv1.ControllerRevision) int64 {
	var m int64
	for _, r := range revs {
		m = max(m, r.Revision)
	}
	return m
}

// dedupCurrent keeps the newest of several revisions of the current
// template: ds's pods are relabelled with its hash and the others deleted.
func (c *Controller) dedupCurrent(ctx context.Context, ds *appsv1.DaemonSet, current []*appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if len(current) == 1 {
		return current[0], nil
	}
	keep := current[0]
	for _, cr := range current {
		if cr.Revision >= keep.Revision {
			keep = cr
		}
	}
	pods, err := c.daemonPods(ctx, ds)
	if err != nil {
		return nil, err
	}
	hash := keep.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
	for _, p := range pods {
		if p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == hash {
			continue
		}
		body, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{appsv1.DefaultDaemonSetUniqueLabelKey: hash}}})
		if err != nil {
			return nil, err
		}
		if _, err := c.client.CoreV1().Pods(ds.Namespace).Patch(ctx, p.Name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
			return nil, err
		}
	}
	for _, cr := range current {
		if cr.Name == keep.Name {
			continue
		}
		if err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Delete(ctx, cr.Name, metav1.DeleteOptions{}); err != nil {
			return nil, err
		}
	}
	return keep, nil
}

// snapshot creates the revision of ds's current template,
// "<daemonset>-<hash>". A revision of that name holding another template
// is a hash collision: the status's collisionCount is raised (so the next
// sync hashes differently) and the create's error returned.
func (c *Controller) snapshot(ctx context.Context, ds *appsv1.DaemonSet, revision int64) (*appsv1.ControllerRevision, error) {
	patch, err := Patch(ds)
	if err != nil {
		return nil, err
	}
	hash := Hash(ds)
	labels := maps.Clone(ds.Spec.Template.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
	cr := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{
		Name: ds.Name + "-" + hash, Namespace: ds.Namespace, Labels: labels, Annotations: ds.Annotations,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, controllerKind)},
	}, Data: runtime.RawExtension{Raw: patch}, Revision: revision}
	created, err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Create(ctx, cr, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return created, err
	}
	existing, getErr := c.client.AppsV1().ControllerRevisions(ds.Namespace).Get(ctx, cr.Name, metav1.GetOptions{})
	if getErr != nil {
		return nil, getErr
	}
	if same, matchErr := matches(ds, existing); matchErr != nil || same {
		return existing, matchErr
	}
	fresh, getErr := c.client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
	if getErr != nil {
		return nil, getErr
	}
	if !reflect.DeepEqual(fresh.Status.CollisionCount, ds.Status.CollisionCount) {
		return nil, fmt.Errorf("found a stale collision count (%d, expected %d) of DaemonSet %q while processing; will retry until it is updated",
			ptr.Deref(ds.Status.CollisionCount, 0), ptr.Deref(fresh.Status.CollisionCount, 0), ds.Name)
	}
	fresh.Status.CollisionCount = ptr.To(ptr.Deref(fresh.Status.CollisionCount, 0) + 1)
	if _, err := c.client.AppsV1().DaemonSets(ds.Namespace).UpdateStatus(ctx, fresh, metav1.UpdateOptions{}); err != nil {
		return nil, err
	}
	c.log.Info("a hash collision: collisionCount raised", "daemonset", ds.Namespace+"/"+ds.Name, "collisionCount", *fresh.Status.CollisionCount)
	return nil, err
}

// cleanupHistory deletes ds's oldest revisions beyond
// revisionHistoryLimit, but none a pod still has the hash of.
func (c *Controller) cleanupHistory(ctx context.Context, ds *appsv1.DaemonSet, old []*appsv1.ControllerRevision) error {
	byNode, err := c.nodesToDaemonPods(ctx, ds, true)
	if err != nil {
		return fmt.Errorf("couldn't get node to daemon pod mapping for daemon set %q: %v", ds.Name, err)
	}
	toKill := len(old) - int(ptr.Deref(ds.Spec.RevisionHistoryLimit, 10))
	if toKill <= 0 {
		return nil
	}
	live := map[string]bool{}
	for _, pods := range byNode {
		for _, p := range pods {
			if h := p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]; h != "" {
				live[h] = true
			}
		}
	}
	old = append([]*appsv1.ControllerRevision(nil), old...)
	sort.SliceStable(old, func(i, j int) bool { return old[i].Revision < old[j].Revision })
	for _, cr := range old {
		if toKill <= 0 {
			break
		}
		if live[cr.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]] {
			continue
		}
		if err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Delete(ctx, cr.Name, metav1.DeleteOptions{}); err != nil {
			return err
		}
		toKill--
	}
	return nil
}
