package statefulset

import (
	"bytes"
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"

	"github.com/admitd/admitd/internal/controllers"
)

// listRevisions are the ControllerRevisions of the set's namespace its
// selector matches that it controls or that have no controller.
func (c *Controller) listRevisions(set *appsv1.StatefulSet) ([]*appsv1.ControllerRevision, error) {
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		return nil, err
	}
	return c.revisions.List(set.Namespace, func(cr *appsv1.ControllerRevision) bool {
		ref := metav1.GetControllerOfNoCopy(cr)
		return (ref == nil || ref.UID == set.UID) && selector.Matches(labels.Set(cr.Labels))
	}), nil
}

// adoptOrphanRevisions makes the set the controller of its revisions that
// have none, after checking on the server that it is not being deleted.
func (c *Controller) adoptOrphanRevisions(ctx context.Context, set *appsv1.StatefulSet) error {
	revisions, err := c.listRevisions(set)
	if err != nil {
		return err
	}
	var orphans []*appsv1.ControllerRevision
	for _, cr := range revisions {
		if metav1.GetControllerOfNoCopy(cr) == nil {
			orphans = append(orphans, cr)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	m := refManager(c, set, labels.Everything(), "ControllerRevision", controllers.PatchControllerRevisions(c.client))
	if err := m.CanAdopt(ctx); err != nil {
		return fmt.Errorf("can't adopt ControllerRevisions: %v", err)
	}
	for _, cr := range orphans {
		if err := m.Adopt(ctx, cr); err != nil {
			return err
		}
	}
	return nil
}

// createRevision creates cr, named for its hash with *collisionCount; a
// revision of that name with other data is a collision: the count goes up
// and the name changes. One with the same data is the revision.
func (c *Controller) createRevision(ctx context.Context, set *appsv1.StatefulSet, cr *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	clone := cr.DeepCopy()
	for {
		clone.Name = RevisionName(set.Name, HashRevision(cr.Data.Raw, collisionCount))
		created, err := c.client.AppsV1().ControllerRevisions(set.Namespace).Create(ctx, clone, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			if err == nil {
				c.wrote(set, revisionsResource, created.ResourceVersion)
			}
			return created, err
		}
		existing, err := c.client.AppsV1().ControllerRevisions(set.Namespace).Get(ctx, clone.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if bytes.Equal(existing.Data.Raw, clone.Data.Raw) {
			return existing, nil
		}
		*collisionCount++
	}
}

// renumberRevision gives an existing revision a new number (a rollback to
// it), retrying on conflicts with the version read back.
func (c *Controller) renumberRevision(ctx context.Context, set *appsv1.StatefulSet, cr *appsv1.ControllerRevision, revision int64) (*appsv1.ControllerRevision, error) {
	clone := cr.DeepCopy()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if clone.Revision == revision {
			return nil
		}
		clone.Revision = revision
		updated, err := c.client.AppsV1().ControllerRevisions(clone.Namespace).Update(ctx, clone, metav1.UpdateOptions{})
		if err == nil {
			clone = updated
			c.wrote(set, revisionsResource, updated.ResourceVersion)
			return nil
		}
		if fresh, ok := c.revisions.Get(clone.Namespace, clone.Name); ok {
			clone = fresh.DeepCopy()
		}
		return err
	})
	return clone, err
}

// truncateHistory deletes the oldest revisions that neither the set's
// current and update revision nor any pod uses, beyond
// revisionHistoryLimit of them.
func (c *Controller) truncateHistory(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod, revisions []*appsv1.ControllerRevision, current, update *appsv1.ControllerRevision) error {
	live := map[string]bool{}
	if current != nil {
		live[current.Name] = true
	}
	if update != nil {
		live[update.Name] = true
	}
	for _, p := range pods {
		live[podRevision(p)] = true
	}
	var unused []*appsv1.ControllerRevision
	for _, cr := range revisions {
		if !live[cr.Name] {
			unused = append(unused, cr)
		}
	}
	limit := 10
	if set.Spec.RevisionHistoryLimit != nil {
		limit = int(*set.Spec.RevisionHistoryLimit)
	}
	if limit < 0 || len(unused) <= limit {
		return nil
	}
	for _, cr := range unused[:len(unused)-limit] {
		err := c.client.AppsV1().ControllerRevisions(cr.Namespace).Delete(ctx, cr.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
