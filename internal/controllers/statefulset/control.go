package statefulset

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// maxBatch is the most pods created or deleted at once (Parallel).
const maxBatch = 500

// reconcile brings the set's pods, claims, revisions and status one step
// toward its spec (upstream's UpdateStatefulSet): it returns the status
// written.
func (c *Controller) reconcile(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod, now time.Time) (*appsv1.StatefulSetStatus, error) {
	set = set.DeepCopy()
	revisions, err := c.listRevisions(set)
	if err != nil {
		return nil, err
	}
	sortRevisions(revisions)
	current, update, status, err := c.performUpdate(ctx, set, pods, revisions, now)
	truncErr := c.truncateHistory(ctx, set, pods, revisions, current, update)
	if err != nil {
		errs := []error{err}
		if agg, ok := err.(utilerrors.Aggregate); ok {
			errs = agg.Errors()
		}
		return nil, utilerrors.NewAggregate(append(errs, truncErr))
	}
	return status, truncErr
}

func (c *Controller) performUpdate(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod, revisions []*appsv1.ControllerRevision, now time.Time) (current, update *appsv1.ControllerRevision, _ *appsv1.StatefulSetStatus, _ error) {
	current, update, collisionCount, err := c.resolveRevisions(ctx, set, revisions)
	if err != nil {
		return current, update, nil, err
	}
	status, err := c.updatePods(ctx, set, current, update, collisionCount, pods, now)
	if err != nil && status == nil {
		return current, update, nil, err
	}
	statusErr := c.writeStatus(ctx, set, status)
	if err != nil {
		return current, update, status, err
	}
	return current, update, status, statusErr
}

// resolveRevisions finds (or creates) the revision of the set's spec, the
// update revision, and the current revision (status.currentRevision, or
// the update revision when that is gone); an existing revision with equal
// data that is not the latest becomes the latest (a rollback).
func (c *Controller) resolveRevisions(ctx context.Context, set *appsv1.StatefulSet, revisions []*appsv1.ControllerRevision) (current, update *appsv1.ControllerRevision, collisionCount int32, err error) {
	if set.Status.CollisionCount != nil {
		collisionCount = *set.Status.CollisionCount
	}
	update, err = NewRevision(set, nextRevisionNumber(revisions), &collisionCount)
	if err != nil {
		return nil, nil, collisionCount, err
	}
	var equal []*appsv1.ControllerRevision
	for _, cr := range revisions {
		if equalRevision(cr, update) {
			equal = append(equal, cr)
		}
	}
	n := len(revisions)
	switch {
	case len(equal) > 0 && equalRevision(revisions[n-1], equal[len(equal)-1]):
		update = revisions[n-1]
	case len(equal) > 0:
		update, err = c.renumberRevision(ctx, set, equal[len(equal)-1], update.Revision)
	case n > 0 && c.sameAsLatest(set, update, revisions[n-1]):
		update = revisions[n-1]
	default:
		update, err = c.createRevision(ctx, set, update, &collisionCount)
	}
	if err != nil {
		return nil, nil, collisionCount, err
	}
	for _, cr := range revisions {
		if cr.Name == set.Status.CurrentRevision {
			current = cr
			break
		}
	}
	if current == nil {
		current = update
	}
	return current, update, collisionCount, nil
}

// sameAsLatest: the latest revision, applied to the set and defaulted as
// the server defaults, records what the proposed one does (its bytes may
// differ when written by another version's encoding).
func (c *Controller) sameAsLatest(set *appsv1.StatefulSet, proposed, latest *appsv1.ControllerRevision) bool {
	if c.defaultSet == nil {
		return false
	}
	latestSet, err := ApplyRevision(set, latest)
	if err != nil {
		return false
	}
	c.defaultSet(latestSet)
	rebuilt, err := NewRevision(latestSet, -1, nil)
	return err == nil && equalRevision(proposed, rebuilt)
}

// replicaSlots places the set's pods: replicas[i] is the pod of ordinal
// start+i (made from the right revision when missing), condemned the
// member pods outside the range, highest ordinal first.
func replicaSlots(set, currentSet, updateSet *appsv1.StatefulSet, current, update string, pods []*corev1.Pod) (replicas, condemned []*corev1.Pod) {
	start, end := StartOrdinal(set), EndOrdinal(set)
	replicas = make([]*corev1.Pod, max(end-start+1, 0))
	for _, p := range pods {
		if inOrdinalRange(p, set) {
			replicas[ordinalOf(p)-start] = p
		} else if ordinalOf(p) >= 0 {
			condemned = append(condemned, p)
		}
	}
	for i := range replicas {
		if replicas[i] == nil {
			replicas[i] = NewVersionedPod(currentSet, updateSet, current, update, start+i)
		}
	}
	slices.SortStableFunc(condemned, func(a, b *corev1.Pod) int { return ordinalOf(b) - ordinalOf(a) })
	return replicas, condemned
}

// firstUnavailable is the first unavailable pod: of the replicas in
// order, then of the condemned from the lowest ordinal.
func firstUnavailable(replicas, condemned []*corev1.Pod, minReadySeconds int32, now time.Time) *corev1.Pod {
	for _, p := range replicas {
		if isUnavailable(p, minReadySeconds, now) {
			return p
		}
	}
	for i := len(condemned) - 1; i >= 0; i-- {
		if isUnavailable(condemned[i], minReadySeconds, now) {
			return condemned[i]
		}
	}
	return nil
}

// updatePods creates, fixes and deletes the set's pods (OrderedReady one
// at a time, Parallel all at once), then rolls them to the update
// revision as the strategy says; it returns the status they give.
func (c *Controller) updatePods(ctx context.Context, set *appsv1.StatefulSet, current, update *appsv1.ControllerRevision, collisionCount int32, pods []*corev1.Pod, now time.Time) (*appsv1.StatefulSetStatus, error) {
	currentSet, err := ApplyRevision(set, current)
	if err != nil {
		return nil, err
	}
	updateSet, err := ApplyRevision(set, update)
	if err != nil {
		return nil, err
	}
	if set.Spec.UpdateStrategy.Type == appsv1.RecreateStatefulSetStrategyType {
		err := fmt.Errorf("statefulset %s/%s uses Recreate strategy but feature gate StatefulSetRecreateStrategy is disabled", set.Namespace, set.Name)
		c.recorder.Event(set, corev1.EventTypeWarning, "UnknownStrategy", err.Error())
		return nil, err
	}
	status := &appsv1.StatefulSetStatus{ObservedGeneration: set.Generation, CurrentRevision: current.Name,
		UpdateRevision: update.Name, CollisionCount: &collisionCount}
	status.Conditions = append(status.Conditions, set.Status.Conditions...)
	countReplicas(status, set.Spec.MinReadySeconds, current.Name, update.Name, now, pods)

	replicas, condemned := replicaSlots(set, currentSet, updateSet, current.Name, update.Name, pods)
	unhealthy := firstUnavailable(replicas, condemned, set.Spec.MinReadySeconds, now)
	if set.DeletionTimestamp != nil {
		return status, nil
	}
	monotonic := set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	recount := func() {
		countReplicas(status, set.Spec.MinReadySeconds, current.Name, update.Name, now, replicas, condemned)
	}

	steps := []func(i int) (bool, error){
		func(i int) (bool, error) { return c.processReplica(ctx, set, updateSet, monotonic, replicas[i], now) },
		func(i int) (bool, error) { return c.fixCondemnedClaims(ctx, updateSet, condemned[i]) },
		func(i int) (bool, error) {
			return c.processCondemned(ctx, set, unhealthy, monotonic, condemned[i], now)
		},
	}
	lists := [][]*corev1.Pod{replicas, condemned, condemned}
	for k, step := range steps {
		if exit, err := runForAll(len(lists[k]), step, monotonic); exit || err != nil {
			recount()
			return status, err
		}
	}
	recount()
	if set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return status, nil
	}
	return status, c.rollingUpdate(ctx, set, replicas, update.Name, status, now)
}

// runForAll calls fn for each index: in order, stopping at the first that
// asks to (monotonic), or all in slow-start batches, stopping at a batch
// with an error.
func runForAll(n int, fn func(i int) (bool, error), monotonic bool) (bool, error) {
	if monotonic {
		for i := range n {
			if exit, err := fn(i); exit || err != nil {
				return true, err
			}
		}
		return false, nil
	}
	if err := slowStartBatch(n, fn); err != nil {
		return true, err
	}
	return false, nil
}

// slowStartBatch calls fn for 0..n-1 in batches of 1, 2, 4, … (at most
// maxBatch) at once, stopping after a batch with errors.
func slowStartBatch(n int, fn func(i int) (bool, error)) error {
	next := 0
	for batch := min(n, 1); batch > 0; batch = min(2*batch, n-next, maxBatch) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for i := next; i < next+batch; i++ {
			wg.Go(func() {
				if _, err := fn(i); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		next += batch
		close(errs)
		var all []error
		for err := range errs {
			all = append(all, err)
		}
		if len(all) > 0 {
			return utilerrors.NewAggregate(all)
		}
	}
	return nil
}
