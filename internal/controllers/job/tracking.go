package job

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// trackStatusAndRemoveFinalizers counts finished pods as upstream does:
// their uids go to status.uncountedTerminatedPods (written first), then
// their tracking finalizers are removed, then they move to the succeeded
// and failed counters; last, a finished Job gets its Complete or Failed
// condition once nothing is left uncounted or terminating.
func (c *Controller) trackStatusAndRemoveFinalizers(ctx context.Context, sc *syncContext, needsFlush bool) error {
	j := sc.job
	indexed := isIndexed(j)
	if indexed {
		sortByIndex(sc.pods)
	}
	withFinalizer := sets.New[types.UID]()
	for _, p := range sc.pods {
		if hasTrackingFinalizer(p) && !sc.expectedRemovedFinalizers.Has(p.UID) {
			withFinalizer.Insert(p.UID)
		}
	}
	if moveCountedPods(&j.Status, withFinalizer) {
		needsFlush = true
	}
	toRelease, newSucceededIndexes, full, changed := c.newlyFinishedPods(sc)
	needsFlush = needsFlush || changed
	if indexed {
		sc.succeededIndexes = sc.succeededIndexes.withIndexes(newSucceededIndexes)
		completed := sc.succeededIndexes.String()
		if completed != j.Status.CompletedIndexes {
			needsFlush = true
		}
		j.Status.Succeeded = int32(sc.succeededIndexes.total())
		j.Status.CompletedIndexes = completed
		var failed *string
		if sc.failedIndexes != nil {
			s := sc.failedIndexes.String()
			failed = &s
		}
		if !equalStrings(j.Status.FailedIndexes, failed) {
			j.Status.FailedIndexes = failed
			needsFlush = true
		}
	}
	if sc.finishedCondition != nil && sc.finishedCondition.Type == batchv1.JobFailureTarget {
		j.Status.Conditions = append(j.Status.Conditions, *sc.finishedCondition)
		needsFlush = true
		sc.finishedCondition = newCondition(batchv1.JobFailed, corev1.ConditionTrue, sc.finishedCondition.Reason, sc.finishedCondition.Message, c.now())
	}
	if isSuccessCriteriaMet(sc.finishedCondition) {
		if successCriteriaMet(j) == nil {
			j.Status.Conditions = append(j.Status.Conditions, *sc.finishedCondition)
			needsFlush = true
		}
		sc.finishedCondition = newCondition(batchv1.JobComplete, corev1.ConditionTrue, sc.finishedCondition.Reason, sc.finishedCondition.Message, c.now())
	}
	var err error
	if needsFlush, err = c.flushAndRemoveFinalizers(ctx, sc, toRelease, withFinalizer, needsFlush); err != nil {
		return err
	}
	finished := !full && c.enactFinished(sc)
	if !needsFlush && !finished {
		return nil
	}
	updated, err := c.updateStatus(ctx, sc.job)
	if err != nil {
		return fmt.Errorf("removing uncounted pods from status: %w", err)
	}
	if finished {
		c.recordFinished(updated, sc.finishedCondition)
		c.finishedJobs.Store(updated.UID, struct{}{})
	}
	return nil
}

// newlyFinishedPods are the pods whose finalizer can go now; their uids
// are added to the Job's uncounted pods (a succeeded Indexed pod adds its
// index instead). full is true when the uncounted lists reached their
// cap and counting stopped.
func (c *Controller) newlyFinishedPods(sc *syncContext) (release []*corev1.Pod, succeededIndexes []int, full, changed bool) {
	j := sc.job
	uncounted := j.Status.UncountedTerminatedPods
	for _, p := range sc.pods {
		if !hasTrackingFinalizer(p) || sc.expectedRemovedFinalizers.Has(p.UID) {
			continue
		}
		failed := isPodFailed(p, j)
		if !canRemoveFinalizer(sc, p, failed) {
			continue
		}
		release = append(release, p)
		ix := completionIndex(p)
		switch {
		case p.Status.Phase == corev1.PodSucceeded && !sc.uncountedFailed.Has(p.UID):
			if isIndexed(j) {
				if validIndex(j, ix) && !sc.prevSucceededIndexes.has(ix) {
					succeededIndexes = append(succeededIndexes, ix)
					changed = true
				}
			} else if !sc.uncountedSucceeded.Has(p.UID) {
				uncounted.Succeeded = append(uncounted.Succeeded, p.UID)
				changed = true
			}
		case failed || (sc.finishedCondition != nil && !isSuccessCriteriaMet(sc.finishedCondition)):
			if sc.uncountedFailed.Has(p.UID) || (isIndexed(j) && !validIndex(j, ix)) {
				break
			}
			if _, count, _ := matchPodFailurePolicy(j.Spec.PodFailurePolicy, p); count {
				uncounted.Failed = append(uncounted.Failed, p.UID)
				changed = true
			}
		}
		if len(succeededIndexes)+len(uncounted.Succeeded)+len(uncounted.Failed) >= maxUncountedPods {
			return release, succeededIndexes, true, changed
		}
	}
	return release, succeededIndexes, false, changed
}

// canRemoveFinalizer: the Job is being deleted or finishing, the pod
// succeeded, or it failed and is not kept for its index's replacement.
func canRemoveFinalizer(sc *syncContext, p *corev1.Pod, failed bool) bool {
	if sc.job.DeletionTimestamp != nil || sc.finishedCondition != nil || p.Status.Phase == corev1.PodSucceeded {
		return true
	}
	if !failed {
		return false
	}
	if hasBackoffLimitPerIndex(sc.job) {
		if ix := completionIndex(p); ix != noIndex {
			if kept, ok := sc.delayedDeletionPerIndex[ix]; ok && kept.UID == p.UID {
				return false
			}
		}
	}
	return true
}

// flushAndRemoveFinalizers writes the status (new uncounted pods, interim
// conditions) if it changed, then removes the finalizers of release and
// counts the pods whose finalizer went; after a failed removal it writes
// the partial progress. It returns whether the status still needs a
// write.
func (c *Controller) flushAndRemoveFinalizers(ctx context.Context, sc *syncContext, release []*corev1.Pod, withFinalizer sets.Set[types.UID], needsFlush bool) (bool, error) {
	if needsFlush {
		updated, err := c.updateStatus(ctx, sc.job)
		if err != nil {
			return needsFlush, fmt.Errorf("adding uncounted pods to status: %w", err)
		}
		sc.job = updated
		c.backoffs.update(sc.backoff)
		needsFlush = false
	}
	var rmErr error
	if len(release) > 0 {
		var removed []bool
		removed, rmErr = c.removeTrackingFinalizers(ctx, jobKey(sc.job), release)
		for i, p := range release {
			if removed[i] {
				withFinalizer.Delete(p.UID)
			}
		}
	}
	if moveCountedPods(&sc.job.Status, withFinalizer) {
		needsFlush = true
	}
	if rmErr != nil && needsFlush {
		if _, err := c.updateStatus(ctx, sc.job); err != nil {
			return needsFlush, fmt.Errorf("removing uncounted pods from status: %w", err)
		}
	}
	return needsFlush, rmErr
}

// moveCountedPods moves the uncounted pods whose finalizer is gone to the
// succeeded and failed counters.
func moveCountedPods(status *batchv1.JobStatus, withFinalizer sets.Set[types.UID]) bool {
	u := status.UncountedTerminatedPods
	keep := func(uids []types.UID) []types.UID {
		var out []types.UID
		for _, uid := range uids {
			if withFinalizer.Has(uid) {
				out = append(out, uid)
			}
		}
		return out
	}
	changed := false
	if left := keep(u.Succeeded); len(left) != len(u.Succeeded) {
		status.Succeeded += int32(len(u.Succeeded) - len(left))
		u.Succeeded = left
		changed = true
	}
	if left := keep(u.Failed); len(left) != len(u.Failed) {
		status.Failed += int32(len(u.Failed) - len(left))
		u.Failed = left
		changed = true
	}
	return changed
}

// removeTrackingFinalizers removes the finalizer of each pod at once; the
// i-th result is true when pod i's went (or the pod is gone).
func (c *Controller) removeTrackingFinalizers(ctx context.Context, k string, pods []*corev1.Pod) ([]bool, error) {
	uids := make([]types.UID, len(pods))
	for i, p := range pods {
		uids[i] = p.UID
	}
	c.finalizerExpectations.expectRemoved(k, uids)
	removed := make([]bool, len(pods))
	errs := make(chan error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Go(func() {
			if !hasTrackingFinalizer(p) {
				return
			}
			if err := c.removeTrackingFinalizer(ctx, p); err != nil {
				c.finalizerExpectations.removalObserved(k, p.UID)
				if !apierrors.IsNotFound(err) {
					errs <- fmt.Errorf("removing tracking finalizer: %w", err)
					return
				}
			}
			removed[i] = true
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return removed, err
	default:
		return removed, nil
	}
}

// removeTrackingFinalizer patches the finalizer out of the pod.
func (c *Controller) removeTrackingFinalizer(ctx context.Context, p *corev1.Pod) error {
	if !hasTrackingFinalizer(p) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"$deleteFromPrimitiveList/finalizers": []string{batchv1.JobTrackingFinalizer}}})
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}

// enactFinished sets the Complete or Failed condition (and the completion
// time) once no pod is uncounted or terminating.
func (c *Controller) enactFinished(sc *syncContext) bool {
	if sc.finishedCondition == nil {
		return false
	}
	j := sc.job
	if u := j.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		return false
	}
	if sc.terminating > 0 {
		return false
	}
	f := sc.finishedCondition
	j.Status.Conditions, _ = ensureCondition(j.Status.Conditions, f.Type, f.Status, f.Reason, f.Message, c.now())
	if f.Type == batchv1.JobComplete {
		j.Status.CompletionTime = &f.LastTransitionTime
	}
	return true
}

// recordFinished records Completed (and TooManySucceededPods), or the
// failure's reason and message.
func (c *Controller) recordFinished(j *batchv1.Job, f *batchv1.JobCondition) {
	if f.Type != batchv1.JobComplete {
		c.recorder.Event(j, corev1.EventTypeWarning, f.Reason, f.Message)
		return
	}
	if j.Spec.Completions != nil && j.Status.Succeeded > *j.Spec.Completions {
		c.recorder.Event(j, corev1.EventTypeWarning, "TooManySucceededPods", "Too many succeeded pods running after completion count reached")
	}
	c.recorder.Event(j, corev1.EventTypeNormal, "Completed", "Job completed")
}

func (c *Controller) updateStatus(ctx context.Context, j *batchv1.Job) (*batchv1.Job, error) {
	return c.client.BatchV1().Jobs(j.Namespace).UpdateStatus(ctx, j, metav1.UpdateOptions{})
}

func equalStrings(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
