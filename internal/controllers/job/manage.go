package job

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/controllers/replicaset"
)

// Event reasons, as kube-controller-manager's (pkg/controller).
const (
	reasonFailedCreate     = "FailedCreate"
	reasonSuccessfulCreate = "SuccessfulCreate"
	reasonFailedDelete     = "FailedDelete"
	reasonSuccessfulDelete = "SuccessfulDelete"
)

var jobKind = batchv1.SchemeGroupVersion.WithKind("Job")

// manageJob creates or deletes pods so that the Job has as many active as
// it wants (parallelism, at most the completions left), deleting them all
// when it is suspended; it returns the active count after.
func (c *Controller) manageJob(ctx context.Context, sc *syncContext) (int32, error) {
	j, k := sc.job, jobKey(sc.job)
	active := int32(len(sc.activePods))
	if jobSuspended(j) {
		rm := activePodsForRemoval(j, sc.activePods, int(active))
		c.expectations.Expect(k, 0, len(rm))
		removedReady, removed, err := c.deleteJobPods(ctx, j, rm)
		sc.terminating += removed
		sc.ready -= removedReady
		return active - removed, err
	}
	want := wantActive(j, sc.succeeded, active)
	rm := activePodsForRemoval(j, sc.activePods, int(max(active-want, 0)))
	if len(rm) > maxPodChangesPerSync {
		rm = rm[:maxPodChangesPerSync]
	}
	if len(rm) > 0 {
		c.expectations.Expect(k, 0, len(rm))
		removedReady, removed, err := c.deleteJobPods(ctx, j, rm)
		sc.terminating += removed
		sc.ready -= removedReady
		return active - removed, err
	}
	var terminating int32
	if onlyReplaceFailedPods(j) {
		terminating = sc.terminating
	}
	diff := want - terminating - active
	if diff <= 0 {
		return active, nil
	}
	if !hasBackoffLimitPerIndex(j) {
		if wait := sc.backoff.remaining(c.now()); wait > 0 {
			c.enqueueAfter(j, max(wait, syncBatchPeriod))
			return active, nil
		}
	}
	diff = min(diff, maxPodChangesPerSync)
	var indexes []int
	if isIndexed(j) {
		indexes = firstPendingIndexes(sc, int(diff), int(*j.Spec.Completions))
		if hasBackoffLimitPerIndex(j) {
			var wait time.Duration
			if indexes, wait = c.indexesReadyForCreation(indexes, sc.delayedDeletionPerIndex); wait > 0 {
				c.enqueueAfter(j, max(wait, syncBatchPeriod))
				return active, nil
			}
		}
		diff = int32(len(indexes))
	}
	created, err := c.createPods(ctx, sc, indexes, int(diff))
	return active + int32(created), err
}

// wantActive is how many pods the Job should have running.
func wantActive(j *batchv1.Job, succeeded, active int32) int32 {
	parallelism := *j.Spec.Parallelism
	if j.Spec.Completions == nil {
		if succeeded > 0 {
			return active
		}
		return parallelism
	}
	return max(min(*j.Spec.Completions-succeeded, parallelism), 0)
}

// indexesReadyForCreation are those of indexes whose backoff has passed;
// when none has, the shortest wait.
func (c *Controller) indexesReadyForCreation(indexes []int, delayed map[int]*corev1.Pod) ([]int, time.Duration) {
	var ready []int
	var shortest *time.Duration
	for _, ix := range indexes {
		wait := time.Duration(0)
		if p := delayed[ix]; p != nil {
			last := finishedTime(p)
			wait = remainingForFailures(c.now(), absoluteFailureCount(p)+1, &last)
		}
		if wait == 0 {
			ready = append(ready, ix)
		} else if shortest == nil || wait < *shortest {
			shortest = &wait
		}
	}
	if len(ready) > 0 || shortest == nil {
		return ready, 0
	}
	return nil, *shortest
}

// createPods creates n pods (one per index for an Indexed Job) in
// slow-start batches of 1, 2, 4…, stopping after a batch with a failure;
// it returns how many were created (or refused as the namespace
// terminates) and the first error.
func (c *Controller) createPods(ctx context.Context, sc *syncContext, indexes []int, n int) (int, error) {
	j, k := sc.job, jobKey(sc.job)
	c.expectations.Expect(k, n, 0)
	template := j.Spec.Template.DeepCopy()
	if isIndexed(j) {
		addCompletionIndexEnv(template)
	}
	if !slices.Contains(template.Finalizers, batchv1.JobTrackingFinalizer) {
		template.Finalizers = append(template.Finalizers, batchv1.JobTrackingFinalizer)
	}
	var created atomic.Int32
	var firstErr error
	remaining := n
	for batch := min(n, 1); remaining > 0; batch = min(2*batch, remaining) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for range batch {
			ix := noIndex
			if len(indexes) > 0 {
				ix, indexes = indexes[0], indexes[1:]
			}
			wg.Go(func() {
				err := c.createPod(ctx, sc, template, ix)
				switch {
				case err == nil || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
					// as upstream, a create refused because the namespace
					// is going counts as active: every other would fail too
					created.Add(1)
				default:
					c.expectations.CreationObserved(k)
					errs <- err
				}
			})
		}
		wg.Wait()
		remaining -= batch
		if len(errs) > 0 {
			firstErr = <-errs
			for range remaining {
				c.expectations.CreationObserved(k)
			}
			break
		}
	}
	return int(created.Load()), firstErr
}

// createPod creates one pod of the Job (of index ix, unless noIndex),
// recording SuccessfulCreate or FailedCreate with the server's error.
func (c *Controller) createPod(ctx context.Context, sc *syncContext, base *corev1.PodTemplateSpec, ix int) error {
	j := sc.job
	template := base
	if ix != noIndex {
		template = indexedTemplate(base, j, ix)
		if hasBackoffLimitPerIndex(j) {
			addIndexFailureCounts(template, j, sc.delayedDeletionPerIndex[ix])
		}
	}
	pod := replicaset.PodFromTemplate(template, j.Name, *metav1.NewControllerRef(j, jobKind))
	if ix != noIndex {
		pod.GenerateName = generateNameWithIndex(j.Name, ix)
	}
	if len(pod.Labels) == 0 {
		return errors.New("unable to create pods, no labels")
	}
	created, err := c.client.CoreV1().Pods(j.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			c.recorder.Eventf(j, corev1.EventTypeWarning, reasonFailedCreate, "Error creating: %v", err)
		}
		return err
	}
	c.recorder.Eventf(j, corev1.EventTypeNormal, reasonSuccessfulCreate, "Created pod: %v", created.Name)
	return nil
}

// deletePod deletes a pod of j, recording SuccessfulDelete or
// FailedDelete; a pod already gone returns its NotFound quietly.
func (c *Controller) deletePod(ctx context.Context, j *batchv1.Job, name string) error {
	if err := c.client.CoreV1().Pods(j.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return err
		}
		c.recorder.Eventf(j, corev1.EventTypeWarning, reasonFailedDelete, "Error deleting: %v", err)
		return fmt.Errorf("unable to delete pods: %v", err)
	}
	c.recorder.Eventf(j, corev1.EventTypeNormal, reasonSuccessfulDelete, "Deleted pod: %v", name)
	return nil
}

// deleteJobPods removes the tracking finalizer of each pod, then deletes
// it; it returns how many ready pods and how many pods were deleted.
func (c *Controller) deleteJobPods(ctx context.Context, j *batchv1.Job, pods []*corev1.Pod) (int32, int32, error) {
	k := jobKey(j)
	return c.forEachPod(pods, func(p *corev1.Pod) error {
		err := c.removeTrackingFinalizer(ctx, p)
		if err != nil {
			err = fmt.Errorf("removing completion finalizer: %w", err)
		} else {
			err = c.deletePod(ctx, j, p.Name)
		}
		if err != nil {
			c.expectations.DeletionObserved(k)
		}
		return err
	})
}

// deleteActivePods deletes the pods of a finishing Job, keeping their
// finalizers (they are counted, and removed, by the status tracking).
func (c *Controller) deleteActivePods(ctx context.Context, j *batchv1.Job, pods []*corev1.Pod) (int32, int32, error) {
	return c.forEachPod(pods, func(p *corev1.Pod) error { return c.deletePod(ctx, j, p.Name) })
}

// forEachPod deletes pods at once through del; a pod already gone counts
// as deleted. It returns the deleted ready pods, the deleted pods and the
// first error.
func (c *Controller) forEachPod(pods []*corev1.Pod, del func(*corev1.Pod) error) (int32, int32, error) {
	errs := make(chan error, len(pods))
	deleted := atomic.Int32{}
	deleted.Store(int32(len(pods)))
	var ready atomic.Int32
	var wg sync.WaitGroup
	for _, p := range pods {
		wg.Go(func() {
			if err := del(p); err != nil && !apierrors.IsNotFound(err) {
				deleted.Add(-1)
				errs <- err
			}
			if isReady(p) {
				ready.Add(1)
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return ready.Load(), deleted.Load(), err
	default:
		return ready.Load(), deleted.Load(), nil
	}
}
