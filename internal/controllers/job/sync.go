package job

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
)

// Condition reasons and messages, as upstream's.
const (
	msgBackoffLimitExceeded = "Job has reached the specified backoff limit"
	msgDeadlineExceeded     = "Job was active longer than specified deadline"
	msgMaxFailedIndexes     = "Job has exceeded the specified maximal number of failed indexes"
	msgFailedIndexes        = "Job has failed indexes"
	msgCompletionsReached   = "Reached expected number of succeeded pods"
)

// syncContext is one sync's view of a Job (upstream's syncJobCtx).
type syncContext struct {
	job               *batchv1.Job
	pods              []*corev1.Pod
	activePods        []*corev1.Pod
	finishedCondition *batchv1.JobCondition
	succeeded, failed int32
	ready             int32
	terminating       int32

	prevSucceededIndexes, succeededIndexes intervals
	failedIndexes                          *intervals
	backoff                                backoffRecord
	expectedRemovedFinalizers              sets.Set[types.UID]
	uncountedSucceeded, uncountedFailed    sets.Set[types.UID]
	delayedDeletionPerIndex                map[int]*corev1.Pod
}

func newCondition(t batchv1.JobConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) *batchv1.JobCondition {
	return &batchv1.JobCondition{Type: t, Status: status, LastProbeTime: metav1.NewTime(now),
		LastTransitionTime: metav1.NewTime(now), Reason: reason, Message: message}
}

func (c *Controller) failureTarget(reason, message string) *batchv1.JobCondition {
	return newCondition(batchv1.JobFailureTarget, corev1.ConditionTrue, reason, message, c.now())
}

func jobSuspended(j *batchv1.Job) bool { return ptr.Deref(j.Spec.Suspend, false) }

// sync brings the Job at k one step closer to its spec: pods created or
// deleted, finished pods counted, conditions set.
func (c *Controller) sync(ctx context.Context, k string) error {
	ns, name, _ := strings.Cut(k, "/")
	shared, ok := c.jobs.Get(ns, name)
	if !ok {
		c.expectations.Forget(k)
		c.finalizerExpectations.forget(k)
		c.backoffs.remove(k)
		return nil
	}
	if managedElsewhere(shared) {
		return nil
	}
	j := shared.DeepCopy()
	if isFinished(j) {
		c.backoffs.remove(k)
		c.finishedJobs.Delete(j.UID)
		return nil
	}
	if _, ok := c.finishedJobs.Load(j.UID); ok {
		return nil
	}
	if m := j.Spec.CompletionMode; m != nil && *m != batchv1.NonIndexedCompletion && *m != batchv1.IndexedCompletion {
		c.recorder.Event(j, corev1.EventTypeWarning, "UnknownCompletionMode", "Skipped Job sync because completion mode is unknown")
		return nil
	}
	if j.Status.UncountedTerminatedPods == nil {
		j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	satisfied := c.expectations.Satisfied(k)
	pods, err := c.podsForJob(ctx, j)
	if err != nil {
		return err
	}
	sc := c.newSyncContext(j, pods, k)
	if j.Status.StartTime == nil && !jobSuspended(j) {
		j.Status.StartTime = ptr.To(metav1.NewTime(c.now()))
	}
	c.evaluateFailure(sc, k)
	if isIndexed(j) {
		c.evaluateIndexes(sc)
	}
	active := int32(len(sc.activePods))
	var manageErr error
	suspendChanged := false
	if sc.finishedCondition != nil {
		deletedReady, deleted, err := c.deleteActivePods(ctx, j, sc.activePods)
		if deleted != active || !satisfied {
			sc.finishedCondition = nil
		}
		active -= deleted
		sc.terminating += deleted
		sc.ready -= deletedReady
		manageErr = err
	} else {
		managed := false
		if satisfied && j.DeletionTimestamp == nil {
			active, manageErr = c.manageJob(ctx, sc)
			managed = true
		}
		if complete(j, sc.succeeded, active) {
			sc.finishedCondition = newCondition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue,
				batchv1.JobReasonCompletionsReached, msgCompletionsReached, c.now())
		} else if managed {
			suspendChanged = c.updateSuspendCondition(j)
		}
	}
	needsUpdate := suspendChanged || active != j.Status.Active || !ptr.Equal(&sc.ready, j.Status.Ready) ||
		!ptr.Equal(j.Status.Terminating, &sc.terminating)
	j.Status.Active = active
	j.Status.Ready = ptr.To(sc.ready)
	j.Status.Terminating = ptr.To(sc.terminating)
	if err := c.trackStatusAndRemoveFinalizers(ctx, sc, needsUpdate); err != nil {
		return fmt.Errorf("tracking status: %w", err)
	}
	return manageErr
}

func (c *Controller) newSyncContext(j *batchv1.Job, pods []*corev1.Pod, k string) *syncContext {
	active := activePods(pods)
	sc := &syncContext{job: j, pods: pods, activePods: active, ready: countReady(active),
		terminating:               int32(len(terminatingPods(pods))),
		expectedRemovedFinalizers: c.finalizerExpectations.expected(k),
		uncountedSucceeded:        sets.New(j.Status.UncountedTerminatedPods.Succeeded...),
		uncountedFailed:           sets.New(j.Status.UncountedTerminatedPods.Failed...)}
	newSucceeded := validPods(sc, sc.uncountedSucceeded, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	newFailed := validPods(sc, sc.uncountedFailed, func(p *corev1.Pod) bool { return isPodFailed(p, j) })
	sc.succeeded = j.Status.Succeeded + int32(len(newSucceeded)) + int32(len(sc.uncountedSucceeded))
	sc.failed = j.Status.Failed + int32(countedFailures(j, newFailed)) + int32(len(sc.uncountedFailed))
	sc.backoff = c.backoffs.next(k, newSucceeded, newFailed)
	return sc
}

// validPods are the pods not counted yet (with the finalizer, not in
// skip, not awaiting their finalizer's removal; for an Indexed Job, with
// a valid index) for which keep is true (all when keep is nil).
func validPods(sc *syncContext, skip sets.Set[types.UID], keep func(*corev1.Pod) bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range sc.pods {
		if !hasTrackingFinalizer(p) || skip.Has(p.UID) || sc.expectedRemovedFinalizers.Has(p.UID) {
			continue
		}
		if isIndexed(sc.job) && !validIndex(sc.job, completionIndex(p)) {
			continue
		}
		if keep == nil || keep(p) {
			out = append(out, p)
		}
	}
	return out
}

// countedFailures are the failed pods the pod failure policy does not
// ignore.
func countedFailures(j *batchv1.Job, failed []*corev1.Pod) int {
	n := len(failed)
	if j.Spec.PodFailurePolicy != nil {
		for _, p := range failed {
			if _, count, _ := matchPodFailurePolicy(j.Spec.PodFailurePolicy, p); !count {
				n--
			}
		}
	}
	return n
}

// evaluateFailure sets the finished condition a Job already reached
// (SuccessCriteriaMet, FailureTarget) or now reaches by its pod failure
// policy, backoff limit or deadline; it schedules the deadline's sync.
func (c *Controller) evaluateFailure(sc *syncContext, k string) {
	j := sc.job
	sc.finishedCondition = successCriteriaMet(j)
	if sc.finishedCondition == nil {
		if ft := findCondition(j.Status.Conditions, batchv1.JobFailureTarget); ft != nil && ft.Status == corev1.ConditionTrue {
			sc.finishedCondition = newCondition(batchv1.JobFailed, corev1.ConditionTrue, ft.Reason, ft.Message, c.now())
		} else if msg := failJobMessage(j, sc.pods); msg != nil {
			sc.finishedCondition = c.failureTarget(batchv1.JobReasonPodFailurePolicy, *msg)
		}
	}
	if sc.finishedCondition != nil {
		return
	}
	switch {
	case sc.failed > *j.Spec.BackoffLimit || pastBackoffLimitOnFailure(j, sc.pods):
		sc.finishedCondition = c.failureTarget(batchv1.JobReasonBackoffLimitExceeded, msgBackoffLimitExceeded)
	case c.pastActiveDeadline(j):
		sc.finishedCondition = c.failureTarget(batchv1.JobReasonDeadlineExceeded, msgDeadlineExceeded)
	case j.Spec.ActiveDeadlineSeconds != nil && !jobSuspended(j):
		c.queue.AddAfter(k, time.Duration(*j.Spec.ActiveDeadlineSeconds)*time.Second-c.now().Sub(j.Status.StartTime.Time))
	}
}

// evaluateIndexes counts an Indexed Job's succeeded and failed indexes,
// failing it on failed indexes or meeting its success policy.
func (c *Controller) evaluateIndexes(sc *syncContext) {
	j := sc.job
	sc.prevSucceededIndexes, sc.succeededIndexes = succeededIndexes(j, sc.pods)
	sc.succeeded = int32(sc.succeededIndexes.total())
	if hasBackoffLimitPerIndex(j) {
		sc.failedIndexes = failedIndexes(j, sc.pods)
		if sc.finishedCondition == nil {
			failed := sc.failedIndexes.total()
			if j.Spec.MaxFailedIndexes != nil && failed > int(*j.Spec.MaxFailedIndexes) {
				sc.finishedCondition = c.failureTarget(batchv1.JobReasonMaxFailedIndexesExceeded, msgMaxFailedIndexes)
			} else if failed > 0 && failed+sc.succeededIndexes.total() >= int(*j.Spec.Completions) {
				sc.finishedCondition = c.failureTarget(batchv1.JobReasonFailedIndexes, msgFailedIndexes)
			}
		}
		sc.delayedDeletionPerIndex = podsWithDelayedDeletionPerIndex(sc)
	}
	if sc.finishedCondition == nil {
		if msg, met := matchSuccessPolicy(j.Spec.SuccessPolicy, *j.Spec.Completions, sc.succeededIndexes); met {
			sc.finishedCondition = newCondition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, batchv1.JobReasonSuccessPolicy, msg, c.now())
		}
	}
}

// complete: a Job without completions once a pod succeeded and none is
// active; otherwise once completions pods succeeded and none is active.
func complete(j *batchv1.Job, succeeded, active int32) bool {
	if j.Spec.Completions == nil {
		return succeeded > 0 && active == 0
	}
	return succeeded >= *j.Spec.Completions && active == 0
}

// updateSuspendCondition sets Suspended True (JobSuspended) or False
// (JobResumed, restarting the clock of activeDeadlineSeconds) and records
// the event, when it changes.
func (c *Controller) updateSuspendCondition(j *batchv1.Job) bool {
	var changed bool
	if jobSuspended(j) {
		j.Status.Conditions, changed = ensureCondition(j.Status.Conditions, batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", c.now())
		if changed {
			c.recorder.Event(j, corev1.EventTypeNormal, "Suspended", "Job suspended")
			j.Status.StartTime = nil
		}
		return changed
	}
	j.Status.Conditions, changed = ensureCondition(j.Status.Conditions, batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", c.now())
	if changed {
		c.recorder.Event(j, corev1.EventTypeNormal, "Resumed", "Job resumed")
		j.Status.StartTime = ptr.To(metav1.NewTime(c.now()))
	}
	return changed
}

// ensureCondition sets a condition of type t, replacing one that differs
// in status, reason or message; a False condition is not added anew.
func ensureCondition(list []batchv1.JobCondition, t batchv1.JobConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) ([]batchv1.JobCondition, bool) {
	if cond := findCondition(list, t); cond != nil {
		if cond.Status != status || cond.Reason != reason || cond.Message != message {
			*cond = *newCondition(t, status, reason, message, now)
			return list, true
		}
		return list, false
	}
	if status != corev1.ConditionFalse {
		return append(list, *newCondition(t, status, reason, message, now)), true
	}
	return list, false
}

// failJobMessage is the message of the first FailJob rule a failed pod
// matches.
func failJobMessage(j *batchv1.Job, pods []*corev1.Pod) *string {
	if j.Spec.PodFailurePolicy == nil {
		return nil
	}
	for _, p := range pods {
		if isPodFailed(p, j) {
			if msg, _, _ := matchPodFailurePolicy(j.Spec.PodFailurePolicy, p); msg != nil {
				return msg
			}
		}
	}
	return nil
}

// pastBackoffLimitOnFailure: with restartPolicy OnFailure, the running
// and pending pods' containers restarted backoffLimit times (once, for a
// limit of 0).
func pastBackoffLimitOnFailure(j *batchv1.Job, pods []*corev1.Pod) bool {
	if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	var restarts int32
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodPending {
			continue
		}
		for _, s := range p.Status.InitContainerStatuses {
			restarts += s.RestartCount
		}
		for _, s := range p.Status.ContainerStatuses {
			restarts += s.RestartCount
		}
	}
	if *j.Spec.BackoffLimit == 0 {
		return restarts > 0
	}
	return restarts >= *j.Spec.BackoffLimit
}

func (c *Controller) pastActiveDeadline(j *batchv1.Job) bool {
	if j.Spec.ActiveDeadlineSeconds == nil || j.Status.StartTime == nil || jobSuspended(j) {
		return false
	}
	return c.now().Sub(j.Status.StartTime.Time) >= time.Duration(*j.Spec.ActiveDeadlineSeconds)*time.Second
}
